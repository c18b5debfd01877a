// What profiler/capture/cupti provides to the tracer factory (tracer_factory.cpp). It lives in the
// GPU module (libmeshscope-gpu.so, profiler/runtime/plugin.h), which exports it as a table.
#pragma once

#include <memory>

#include "profiler/capture/action_tracer.h"
#include "profiler/runtime/backend.h"
#include "profiler/runtime/plugin.h"

namespace meshscope::capture::cupti {

// A tracer for a cuda or cuda-virtual backend: NVTX range + external correlation id per action,
// CUPTI activity records mapped back to actions. Throws std::runtime_error if CUPTI cannot start.
std::unique_ptr<ActionTracer> make_cupti_tracer(runtime::Backend& backend);

// The table the GPU module returns from `extern "C" meshscope_cupti_tracers()`.
struct CuptiTracerEntry {
  int abi = runtime::kPluginAbi;
  std::unique_ptr<ActionTracer> (*make_cupti_tracer)(runtime::Backend&) = nullptr;
};
inline constexpr const char* kCuptiTracerSymbol = "meshscope_cupti_tracers";

}  // namespace meshscope::capture::cupti
