// Builds a 1F1B pipeline Timeline by list-scheduling each stage's operations in program order.
#include "gui/view/synthetic.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace meshscope::gui {
namespace {

using traces::LaneKind;
using traces::Phase;
using traces::Span;
using traces::SpanKind;
using traces::Timeline;

struct Op {
  bool forward = true;
  int microbatch = 0;
};

// 1F1B on stage s of pp: pp - s - 1 warm-up forwards, then one forward one backward, then the
// remaining backwards.
std::vector<Op> one_f_one_b(int s, int pp, int m) {
  std::vector<Op> ops;
  const int warmup = std::min(pp - s - 1, m);
  int f = 0, b = 0;
  for (; f < warmup; ++f) ops.push_back({true, f});
  while (f < m) {
    ops.push_back({true, f++});
    ops.push_back({false, b++});
  }
  while (b < m) ops.push_back({false, b++});
  return ops;
}

class Rng {  // splitmix64: fixed seed, identical traces everywhere
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  double uniform() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return static_cast<double>((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
  }

 private:
  uint64_t state_;
};

struct Builder {
  const SyntheticOptions& o;
  Timeline t;
  Rng rng;
  std::vector<uint32_t> names;  // interned "F s{s} mb{k}" / "B s{s} mb{k}"

  int64_t cost(int64_t ns) {
    return std::max<int64_t>(
        1, static_cast<int64_t>(static_cast<double>(ns) * (1 + o.jitter * (rng.uniform() - 0.5))));
  }
  uint16_t device_of(int dp, int pp, int tp) const {
    return static_cast<uint16_t>((dp * o.pp + pp) * o.tp + tp);
  }
  uint32_t add(uint16_t dev, uint16_t lane, int64_t b, int64_t e, SpanKind kind, Phase phase,
               int stage, int mb, uint32_t name, int64_t bytes = 0) {
    Span s;
    s.begin_ns = b;
    s.end_ns = e;
    s.device = dev;
    s.lane = lane;
    s.kind = kind;
    s.phase = phase;
    s.stage = static_cast<int16_t>(stage);
    s.microbatch = mb;
    s.name = name;
    s.bytes = bytes;
    return t.add_span(s);
  }
  // One step of one dp replica starting at `start`; returns when its last stage finishes.
  int64_t step(int dp, int64_t start);
};

int64_t Builder::step(int dp, int64_t start) {
  const int pp = o.pp, m = o.microbatches;
  std::vector<std::vector<Op>> program(pp);
  for (int s = 0; s < pp; ++s) program[s] = one_f_one_b(s, pp, m);
  std::vector<size_t> next(pp, 0);
  std::vector<int64_t> free_at(pp, start);
  // end times of F and B of (stage, microbatch); -1 until scheduled
  std::vector<int64_t> f_end(pp * m, -1), b_end(pp * m, -1);
  const uint32_t send_name = t.strings.intern("SEND"), recv_name = t.strings.intern("RECV");
  bool progress = true;
  while (progress) {
    progress = false;
    for (int s = 0; s < pp; ++s) {
      while (next[s] < program[s].size()) {
        const Op op = program[s][next[s]];
        const int k = op.microbatch;
        int64_t ready = free_at[s];
        if (op.forward && s > 0) {
          if (f_end[(s - 1) * m + k] < 0) break;
          ready = std::max(ready, f_end[(s - 1) * m + k] + o.p2p_ns);
        } else if (!op.forward) {
          const int64_t dep = s + 1 < pp ? b_end[(s + 1) * m + k] : f_end[s * m + k];
          if (dep < 0) break;
          ready = std::max(ready, dep + (s + 1 < pp ? o.p2p_ns : 0));
        }
        const int64_t end = ready + cost(op.forward ? o.forward_ns : o.backward_ns);
        (op.forward ? f_end : b_end)[s * m + k] = end;
        free_at[s] = end;
        ++next[s];
        progress = true;
        const uint32_t name = names[(s * m + k) * 2 + (op.forward ? 0 : 1)];
        const int peer = op.forward ? s + 1 : s - 1;
        for (int tp = 0; tp < o.tp; ++tp) {
          const uint16_t dev = device_of(dp, s, tp);
          add(dev, 0, ready, end, SpanKind::kCompute,
              op.forward ? Phase::kForward : Phase::kBackward, s, k, name);
          if (peer < 0 || peer >= pp) continue;
          const int64_t xfer_end = end + cost(o.p2p_ns);
          const uint32_t snd =
              add(dev, 1, end, xfer_end, SpanKind::kSend, Phase::kNone, s, k, send_name, 1 << 20);
          const uint32_t rcv = add(device_of(dp, peer, tp), 1, end, xfer_end, SpanKind::kRecv,
                                   Phase::kNone, peer, k, recv_name, 1 << 20);
          t.add_flow(snd, rcv);
        }
      }
    }
  }
  return *std::max_element(free_at.begin(), free_at.end());
}

}  // namespace

// Spans of one step: per pipeline (dp x tp of them) 2m compute per stage, a send and a recv per
// microbatch and direction on each of the pp - 1 links, and per device the optimizer step and,
// with dp > 1, the all-reduce.
static size_t spans_per_step(const SyntheticOptions& o) {
  const auto m = static_cast<size_t>(o.microbatches);
  const auto pp = static_cast<size_t>(o.pp);
  const size_t pipelines = static_cast<size_t>(o.dp) * static_cast<size_t>(o.tp);
  return pipelines * (2 * m * pp + 4 * m * (pp - 1) + pp * (o.dp > 1 ? 2 : 1));
}

double synthetic_peak_bytes(size_t spans) {
  return static_cast<double>(spans) * kSyntheticPeakBytesPerSpan;
}

int steps_for_spans(const SyntheticOptions& o, size_t spans) {
  return static_cast<int>(std::max<size_t>(1, spans / std::max<size_t>(spans_per_step(o), 1)));
}

void add_mesh_devices(Timeline& t, int dp_size, int pp_size, int tp_size) {
  for (int dp = 0; dp < dp_size; ++dp) {
    for (int pp = 0; pp < pp_size; ++pp) {
      for (int tp = 0; tp < tp_size; ++tp) {
        const int rank = (dp * pp_size + pp) * tp_size + tp;
        const uint16_t d =
            t.add_device(rank,
                         "rank " + std::to_string(rank) + " \xC2\xB7 dp" + std::to_string(dp) +
                             " pp" + std::to_string(pp) + " tp" + std::to_string(tp),
                         {dp, pp, tp});
        t.add_lane(d, "compute", LaneKind::kCompute);
        t.add_lane(d, "comm", LaneKind::kComm);
      }
    }
  }
}

Timeline make_synthetic_pipeline(const SyntheticOptions& o) {
  if (o.dp < 1 || o.pp < 1 || o.tp < 1 || o.microbatches < 1 || o.steps < 1) {
    throw std::invalid_argument(
        "synthetic pipeline: dp, pp, tp, microbatches and steps must be >= 1");
  }
  Builder b{o, Timeline{}, Rng(o.seed), {}};
  Timeline& t = b.t;
  add_mesh_devices(t, o.dp, o.pp, o.tp);
  for (int s = 0; s < o.pp; ++s) {
    for (int k = 0; k < o.microbatches; ++k) {
      const std::string suffix = " s" + std::to_string(s) + " mb" + std::to_string(k);
      b.names.push_back(t.strings.intern("F" + suffix));
      b.names.push_back(t.strings.intern("B" + suffix));
    }
  }
  const uint32_t allreduce = t.strings.intern("ALLREDUCE(dp)");
  const uint32_t optimizer = t.strings.intern("STEP");
  const size_t devices = t.devices.size();
  t.spans.reserve(spans_per_step(o) * static_cast<size_t>(o.steps));
  int64_t start = 0;
  for (int step = 0; step < o.steps; ++step) {
    int64_t done = start;
    for (int dp = 0; dp < o.dp; ++dp) done = std::max(done, b.step(dp, start));
    // The gradient all-reduce waits for every replica; then each device steps its optimizer.
    int64_t reduced = done;
    if (o.dp > 1) {
      reduced = done + b.cost(o.allreduce_ns);
      for (uint16_t d = 0; d < devices; ++d) {
        const uint32_t span = b.add(d, 1, done, reduced, SpanKind::kCollective, Phase::kNone,
                                    t.devices[d].coord.pp, -1, allreduce, 1 << 24);
        t.set_collective(span, traces::Collective{.op = traces::CollectiveOp::kAllReduce,
                                                  .group = traces::GroupKind::kDp,
                                                  .bytes = 1 << 24,
                                                  .algorithm = traces::CollectiveAlgorithm::kAuto});
      }
    }
    int64_t end = reduced;
    for (uint16_t d = 0; d < devices; ++d) {
      const int64_t e = reduced + b.cost(o.optimizer_ns);
      b.add(d, 0, reduced, e, SpanKind::kCompute, Phase::kOptimizer, t.devices[d].coord.pp, -1,
            optimizer);
      end = std::max(end, e);
    }
    t.steps.push_back({start, end});
    start = end;
  }
  t.run.source = traces::RunSource::kSynthetic;
  t.run.mesh = {o.dp, o.pp, o.tp};
  t.run.family = t.run.schedule = "1f1b";
  t.run.microbatches = o.microbatches;
  t.run.stages = o.pp;
  t.run.virtual_stages = 1;
  t.metadata["source"] = "synthetic";
  t.metadata["schedule"] = "1f1b";
  t.sort_spans();
  return t;
}

}  // namespace meshscope::gui
