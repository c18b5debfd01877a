// make_tracer: the host-clock tracer always; CUPTI + NVTX from the GPU module when this build made
// one (MESHSCOPE_HAS_CUPTI_TRACER) and the backend runs on GPUs.
#include "profiler/capture/tracer_factory.h"

#include <stdexcept>
#include <string>

#include "profiler/capture/cupti_entry.h"
#include "profiler/capture/host_tracer.h"
#include "profiler/runtime/plugin.h"
#include "traces/enum_names.h"

namespace meshscope::capture {

std::optional<TracerKind> parse_tracer_kind(std::string_view s) {
  return traces::parse_enum<TracerKind>(kTracerKindNames, s);
}

namespace {

// The GPU module's backends (backend_table.h) run on GPUs; CUPTI traces them.
bool on_gpu(runtime::BackendKind backend) { return runtime::info(backend).in_gpu_module; }

TracerKind resolve(TracerKind kind, runtime::BackendKind backend) {
  if (kind != TracerKind::kAuto) return kind;
  return on_gpu(backend) && MESHSCOPE_HAS_CUPTI_TRACER ? TracerKind::kCupti
                                                       : TracerKind::kHostClock;
}

// The GPU module's CUPTI table; nullptr with *why when this build has none or it cannot load.
const cupti::CuptiTracerEntry* cupti_entry(std::string* why) {
  if (MESHSCOPE_HAS_CUPTI_TRACER == 0) {
    *why = "this build has no CUPTI tracer (configure with MESHSCOPE_CUDA=ON)";
    return nullptr;
  }
  using Get = const cupti::CuptiTracerEntry* (*)();
  const auto get = reinterpret_cast<Get>(
      runtime::plugin_symbol(runtime::kGpuModuleFile, cupti::kCuptiTracerSymbol, why));
  if (get == nullptr) return nullptr;
  const cupti::CuptiTracerEntry* e = get();
  if (e->abi != runtime::kPluginAbi) {
    *why = std::string(runtime::kGpuModuleFile) + " is from another build of meshscope";
    return nullptr;
  }
  return e;
}

}  // namespace

void prepare_tracer(TracerKind kind, runtime::BackendKind backend) {
  // An auto backend may become a GPU one; the variable is harmless on the cpu backend.
  const bool maybe_gpu = on_gpu(backend) || backend == runtime::BackendKind::kAuto;
  const TracerKind k = resolve(kind, maybe_gpu ? runtime::BackendKind::kCudaVirtual : backend);
  if (k != TracerKind::kCupti || !maybe_gpu) return;
  std::string why;  // a module that cannot load is reported by make_backend / make_tracer
  if (const cupti::CuptiTracerEntry* e = cupti_entry(&why)) e->prepare_nvtx_injection();
}

std::unique_ptr<ActionTracer> make_tracer(TracerKind kind, runtime::Backend& backend) {
  const bool gpu = on_gpu(backend.kind());
  kind = resolve(kind, backend.kind());
  if (kind == TracerKind::kHostClock) return std::make_unique<HostClockTracer>();
  if (!gpu) {
    throw std::runtime_error("tracer 'cupti' needs a cuda backend, not '" +
                             std::string(runtime::name(backend.kind())) + "'");
  }
  std::string why;
  const cupti::CuptiTracerEntry* e = cupti_entry(&why);
  if (e == nullptr) throw std::runtime_error("tracer 'cupti' is not available: " + why);
  return e->make_cupti_tracer(backend);
}

}  // namespace meshscope::capture
