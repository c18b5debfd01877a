// What profiler/capture/cupti provides to the tracer factory (tracer_factory.cpp). It lives in the
// GPU module (libmeshscope-gpu.so, profiler/runtime/plugin.h), which exports it as a table.
#pragma once

#include <memory>
#include <string>

#include "profiler/capture/action_tracer.h"
#include "profiler/runtime/backend.h"
#include "profiler/runtime/plugin.h"

namespace meshscope::capture::cupti {

// A tracer for a cuda or cuda-virtual backend: NVTX range + external correlation id per action,
// CUPTI activity records mapped back to actions. Throws std::runtime_error if CUPTI cannot start.
std::unique_ptr<ActionTracer> make_cupti_tracer(runtime::Backend& backend);

// Points NVTX_INJECTION64_PATH at the libcupti this binary loaded, unless it is set already (then
// that tool, e.g. Nsight Systems, gets the ranges). Call it before the backend exists: setenv is
// not safe while other threads (the CUDA runtime's, NCCL's) may read the environment, and NVTX
// reads the variable once, at the process's first NVTX call. Returns the variable's value.
std::string prepare_nvtx_injection();

// The table the GPU module returns from `extern "C" meshscope_cupti_tracers()`.
struct CuptiTracerEntry {
  int abi = runtime::kPluginAbi;
  std::unique_ptr<ActionTracer> (*make_cupti_tracer)(runtime::Backend&) = nullptr;
  std::string (*prepare_nvtx_injection)() = nullptr;
};
inline constexpr const char* kCuptiTracerSymbol = "meshscope_cupti_tracers";

}  // namespace meshscope::capture::cupti
