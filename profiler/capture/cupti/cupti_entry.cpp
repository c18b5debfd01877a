// make_cupti_tracer: the CUPTI + NVTX tracer for a cuda or cuda-virtual backend, with every
// rank's compute and communication streams registered as its lanes; exported by the GPU module.
#include "profiler/capture/cupti_entry.h"

#include <stdexcept>

#include "profiler/capture/cupti/cupti_tracer.h"
#include "profiler/runtime/cuda/gpu_backend.h"

namespace meshscope::capture::cupti {

std::unique_ptr<ActionTracer> make_cupti_tracer(runtime::Backend& backend) {
  auto* gpu = dynamic_cast<runtime::cuda::GpuBackend*>(&backend);
  if (gpu == nullptr) {
    throw std::runtime_error("the CUPTI tracer needs a cuda or cuda-virtual backend, not '" +
                             std::string(runtime::name(backend.kind())) + "'");
  }
  std::vector<TracedStream> streams;
  for (int r = 0; r < backend.world_size(); ++r) {
    if (!backend.hosts(r)) continue;  // another process traces it
    const runtime::cuda::RankStreams s = gpu->streams(r);
    const uint32_t ordinal = static_cast<uint32_t>(s.gpu);
    streams.push_back({r, ordinal, s.compute, "compute", traces::LaneKind::kCompute});
    if (s.comm != nullptr && s.comm != s.compute) {
      streams.push_back({r, ordinal, s.comm, "comm", traces::LaneKind::kComm});
    }
    for (const auto& [lane, stream] : s.extra) {
      streams.push_back({r, ordinal, stream, lane, traces::LaneKind::kComm});
    }
  }
  return std::make_unique<CuptiTracer>(make_cupti_api(), make_nvtx_marker(), std::move(streams));
}

}  // namespace meshscope::capture::cupti

extern "C" __attribute__((visibility("default"))) const meshscope::capture::cupti::CuptiTracerEntry*
meshscope_cupti_tracers() {
  static const meshscope::capture::cupti::CuptiTracerEntry entry{
      .make_cupti_tracer = meshscope::capture::cupti::make_cupti_tracer,
      .prepare_nvtx_injection = meshscope::capture::cupti::prepare_nvtx_injection};
  return &entry;
}
