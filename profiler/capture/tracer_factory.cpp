// make_tracer: the host-clock tracer always; CUPTI + NVTX from the GPU module when this build made
// one (MESHSCOPE_HAS_CUPTI_TRACER) and the backend runs on GPUs.
#include "profiler/capture/tracer_factory.h"

#include <stdexcept>
#include <string>

#include "profiler/capture/cupti_entry.h"
#include "profiler/capture/host_tracer.h"
#include "profiler/runtime/plugin.h"

namespace meshscope::capture {

std::optional<TracerKind> parse_tracer_kind(std::string_view s) {
  for (size_t i = 0; i < kTracerKindNames.size(); ++i) {
    if (kTracerKindNames[i] == s) return static_cast<TracerKind>(i);
  }
  return std::nullopt;
}

std::unique_ptr<ActionTracer> make_tracer(TracerKind kind, runtime::Backend& backend) {
  const bool gpu = backend.kind() == runtime::BackendKind::kCuda ||
                   backend.kind() == runtime::BackendKind::kCudaVirtual;
  if (kind == TracerKind::kAuto)
    kind = gpu && MESHSCOPE_HAS_CUPTI_TRACER ? TracerKind::kCupti : TracerKind::kHostClock;
  if (kind == TracerKind::kHostClock) return std::make_unique<HostClockTracer>();
  if (!gpu) {
    throw std::runtime_error("tracer 'cupti' needs a cuda backend, not '" +
                             std::string(runtime::name(backend.kind())) + "'");
  }
  if (MESHSCOPE_HAS_CUPTI_TRACER == 0)
    throw std::runtime_error(
        "tracer 'cupti' is not in this build (configure with MESHSCOPE_CUDA=ON)");
  std::string why;
  using Get = const cupti::CuptiTracerEntry* (*)();
  const auto get = reinterpret_cast<Get>(
      runtime::plugin_symbol(runtime::kGpuModuleFile, cupti::kCuptiTracerSymbol, &why));
  if (get == nullptr) throw std::runtime_error("tracer 'cupti' is not available: " + why);
  const cupti::CuptiTracerEntry* e = get();
  if (e->abi != runtime::kPluginAbi) {
    throw std::runtime_error(std::string("tracer 'cupti': ") + runtime::kGpuModuleFile +
                             " is from another build of meshscope");
  }
  return e->make_cupti_tracer(backend);
}

}  // namespace meshscope::capture
