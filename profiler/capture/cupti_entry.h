// What profiler/capture/cupti provides to the tracer factory (tracer_factory.cpp), which calls it
// only in builds where the target meshscope_capture_cupti exists (MESHSCOPE_HAS_CUPTI_TRACER).
#pragma once

#include <memory>

#include "profiler/capture/action_tracer.h"
#include "profiler/runtime/backend.h"

namespace meshscope::capture::cupti {

// A tracer for a cuda or cuda-virtual backend: NVTX range + external correlation id per action,
// CUPTI activity records mapped back to actions. Throws std::runtime_error if CUPTI cannot start.
std::unique_ptr<ActionTracer> make_cupti_tracer(runtime::Backend& backend);

}  // namespace meshscope::capture::cupti
