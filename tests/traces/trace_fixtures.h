// Hand-built Timelines for the traces tests: a terse span builder and a GPipe pipeline whose
// bubble fraction is known in closed form.
#pragma once

#include <string>

#include "traces/timeline.h"

namespace meshscope::traces::testing {

// Adds a span and returns its index.
inline uint32_t add(Timeline& t, uint16_t device, uint16_t lane, SpanKind kind, int64_t begin_ns,
                    int64_t end_ns, const std::string& name = "", Phase phase = Phase::kNone,
                    int16_t stage = -1, int32_t microbatch = -1) {
  Span s{.begin_ns = begin_ns,
         .end_ns = end_ns,
         .name = t.strings.intern(name),
         .microbatch = microbatch,
         .device = device,
         .lane = lane,
         .stage = stage};
  s.kind = kind;
  s.phase = phase;
  return t.add_span(s);
}

// A device with a compute lane (0) and a comm lane (1).
// A run descriptor with every field set (odd text included), for round trips.
inline RunDescriptor rich_run() {
  RunDescriptor r;
  r.source = RunSource::kCudaVirtual;
  r.backend = "virtual \"fabric\" · 4 GPUs";
  r.mesh = {2, 3, 4};
  r.family = "interleaved";
  r.schedule = "my schedule\nfile";
  r.microbatches = 12;
  r.stages = 6;
  r.virtual_stages = 2;
  r.workload = {.kind = ModelKind::kGpt,
                .layers = 24,
                .hidden = 2304,
                .heads = 24,
                .seq = 2048,
                .vocab = 51200,
                .image = 7,
                .batch = int64_t{1} << 40,
                .experts = 64,
                .top_k = 2,
                .capacity_factor = 1.25,
                .ep = 8};
  r.hardware = "h100-sxm";
  r.cores = 3;
  r.gpu = "NVIDIA H100 80GB HBM3 \"β\"";
  r.process_group_backend = "nccl";
  r.replicas_simulated_once = true;
  r.sim_config = R"({"model": {"kind": "gpt"}, "note": "line\nbreak"})";
  return r;
}

inline uint16_t add_device(Timeline& t, int rank, MeshCoord coord = {}) {
  const uint16_t d = t.add_device(rank, "rank " + std::to_string(rank), coord);
  t.add_lane(d, "compute", LaneKind::kCompute);
  t.add_lane(d, "comm", LaneKind::kComm);
  return d;
}

// GPipe on p stages with m microbatches, forward f ns and backward b ns per microbatch and stage,
// zero-cost transfers: all forwards, then all backwards in reverse stage order. Each device is
// busy m(f+b) of a step of (m+p-1)(f+b), so its bubble fraction is (p-1)/(m+p-1).
inline Timeline gpipe(int p, int m, int64_t f, int64_t b) {
  Timeline t;
  for (int s = 0; s < p; ++s) add_device(t, s, MeshCoord{0, s, 0});
  const int64_t fwd_end = (m + p - 1) * f;
  for (int s = 0; s < p; ++s) {
    const auto d = static_cast<uint16_t>(s);
    for (int i = 0; i < m; ++i) {
      const int64_t fb = (i + s) * f;
      add(t, d, 0, SpanKind::kCompute, fb, fb + f, "F", Phase::kForward, static_cast<int16_t>(s),
          i);
      const int64_t bb = fwd_end + (i + (p - 1 - s)) * b;
      add(t, d, 0, SpanKind::kCompute, bb, bb + b, "B", Phase::kBackward, static_cast<int16_t>(s),
          i);
    }
  }
  t.steps.push_back({0, (m + p - 1) * (f + b)});
  return t;
}

}  // namespace meshscope::traces::testing
