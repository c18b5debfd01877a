// make_tracer: the host-clock tracer always; CUPTI + NVTX when profiler/capture/cupti is built
// (MESHSCOPE_HAS_CUPTI_TRACER) and the backend runs on GPUs.
#include "profiler/capture/tracer_factory.h"

#include <stdexcept>
#include <string>

#include "profiler/capture/host_tracer.h"
#if MESHSCOPE_HAS_CUPTI_TRACER
#include "profiler/capture/cupti_entry.h"
#endif

namespace meshscope::capture {

std::optional<TracerKind> parse_tracer_kind(std::string_view s) {
  for (size_t i = 0; i < kTracerKindNames.size(); ++i) {
    if (kTracerKindNames[i] == s) return static_cast<TracerKind>(i);
  }
  return std::nullopt;
}

namespace {

bool on_gpu(runtime::BackendKind backend) {
  return backend == runtime::BackendKind::kCuda || backend == runtime::BackendKind::kCudaVirtual;
}

TracerKind resolve(TracerKind kind, runtime::BackendKind backend) {
  if (kind != TracerKind::kAuto) return kind;
  return on_gpu(backend) && MESHSCOPE_HAS_CUPTI_TRACER ? TracerKind::kCupti
                                                       : TracerKind::kHostClock;
}

}  // namespace

void prepare_tracer(TracerKind kind, runtime::BackendKind backend) {
#if MESHSCOPE_HAS_CUPTI_TRACER
  // An auto backend may become a GPU one; the variable is harmless on the cpu backend.
  const bool maybe_gpu = on_gpu(backend) || backend == runtime::BackendKind::kAuto;
  const TracerKind k = resolve(kind, maybe_gpu ? runtime::BackendKind::kCudaVirtual : backend);
  if (k == TracerKind::kCupti && maybe_gpu) cupti::prepare_nvtx_injection();
#else
  (void)kind;
  (void)backend;
#endif
}

std::unique_ptr<ActionTracer> make_tracer(TracerKind kind, runtime::Backend& backend) {
  const bool gpu = on_gpu(backend.kind());
  kind = resolve(kind, backend.kind());
  if (kind == TracerKind::kHostClock) return std::make_unique<HostClockTracer>();
  if (!gpu) {
    throw std::runtime_error("tracer 'cupti' needs a cuda backend, not '" +
                             std::string(runtime::name(backend.kind())) + "'");
  }
#if MESHSCOPE_HAS_CUPTI_TRACER
  return cupti::make_cupti_tracer(backend);
#else
  throw std::runtime_error(
      "tracer 'cupti' is not in this build (configure with MESHSCOPE_CUDA=ON)");
#endif
}

}  // namespace meshscope::capture
