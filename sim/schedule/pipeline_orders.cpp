// The compute order of meshscope's own pipeline families, per pp rank (families.h lists them).
#include <algorithm>

#include "sim/schedule/generators.h"

namespace meshscope::schedule {
namespace {

Action compute(ActionKind kind, int stage, int microbatch) {
  return Action{.kind = kind, .stage = stage, .microbatch = microbatch};
}
Action fwd(int stage, int mb) { return compute(ActionKind::kForward, stage, mb); }
Action bwd(int stage, int mb) { return compute(ActionKind::kBackward, stage, mb); }

// One microbatch at a time: F then B, so no two ranks ever compute at once.
std::vector<Action> naive_order(int rank, int m) {
  std::vector<Action> out;
  for (int mb = 0; mb < m; ++mb) {
    out.push_back(fwd(rank, mb));
    out.push_back(bwd(rank, mb));
  }
  return out;
}

std::vector<Action> gpipe_order(int rank, int m) {
  std::vector<Action> out;
  for (int mb = 0; mb < m; ++mb) out.push_back(fwd(rank, mb));
  for (int mb = 0; mb < m; ++mb) out.push_back(bwd(rank, mb));
  return out;
}

// PipeDream-Flush: pp - rank - 1 warm-up forwards keep at most pp - rank microbatches in flight.
std::vector<Action> one_f_one_b_order(int rank, int pp, int m) {
  const int warmup = std::min(pp - rank - 1, m);
  std::vector<Action> out;
  for (int mb = 0; mb < warmup; ++mb) out.push_back(fwd(rank, mb));
  for (int k = 0; k < m - warmup; ++k) {
    out.push_back(fwd(rank, warmup + k));
    out.push_back(bwd(rank, k));
  }
  for (int k = m - warmup; k < m; ++k) out.push_back(bwd(rank, k));
  return out;
}

// ZB-H1: the 1F1B order with B split into I and W; rank r keeps its last r W's pending and runs
// them after the last I, where 1F1B leaves rank r idle while gradients travel to rank 0. As in the
// authors' DeepSpeed ZeroBubbleH1Pipeline and torch's _get_1f1b_rank_ops(enable_zero_bubble).
std::vector<Action> zb_h1_order(int rank, int pp, int m) {
  const int warmup = std::min(pp - rank - 1, m);
  std::vector<Action> out;
  int next_w = 0;
  const auto input_grad = [&](int k) {
    out.push_back(compute(ActionKind::kInputGrad, rank, k));
    if (k >= rank) out.push_back(compute(ActionKind::kWeightGrad, rank, next_w++));
  };
  for (int mb = 0; mb < warmup; ++mb) out.push_back(fwd(rank, mb));
  for (int k = 0; k < m - warmup; ++k) {
    out.push_back(fwd(rank, warmup + k));
    input_grad(k);
  }
  for (int k = m - warmup; k < m; ++k) input_grad(k);
  while (next_w < m) out.push_back(compute(ActionKind::kWeightGrad, rank, next_w++));
  return out;
}

// Megatron-LM's interleaved 1F1B (forward_backward_pipelining_with_interleaving), as torch's
// ScheduleInterleaved1F1B generalises it: microbatches go in rounds of n = m / max(1, m / pp)
// (pp when pp divides m, Megatron-LM's only case; torch also runs m = 3, 5, 6, 10 on pp = 4,
// `microbatches_per_round`). The k-th forward of a rank runs chunk (k mod n*v) / n on microbatch
// (k / (n*v)) * n + k mod n; the k-th backward runs the chunks in reverse. Warm-up:
// 2(pp - rank - 1) + (v - 1) n forwards, at most m v.
std::vector<Action> interleaved_order(int rank, int pp, int v, int m) {
  const int total = m * v;
  const int n = m / std::max(1, m / pp);  // microbatches a round
  const int group = n * v;
  const int warmup = std::min((pp - rank - 1) * 2 + (v - 1) * n, total);
  const auto microbatch = [&](int k) { return (k / group) * n + k % n; };
  const auto chunk = [&](int k, bool forward) {
    const int c = (k % group) / n;
    return forward ? c : v - 1 - c;
  };
  const auto f = [&](int k) { return fwd(chunk(k, true) * pp + rank, microbatch(k)); };
  const auto b = [&](int k) { return bwd(chunk(k, false) * pp + rank, microbatch(k)); };
  std::vector<Action> out;
  for (int k = 0; k < warmup; ++k) out.push_back(f(k));
  for (int k = 0; k < total - warmup; ++k) {
    out.push_back(f(warmup + k));
    out.push_back(b(k));
  }
  for (int k = total - warmup; k < total; ++k) out.push_back(b(k));
  return out;
}

}  // namespace

namespace orders {
std::vector<Action> naive(int rank, int /*pp*/, int /*v*/, int m) { return naive_order(rank, m); }
std::vector<Action> gpipe(int rank, int /*pp*/, int /*v*/, int m) { return gpipe_order(rank, m); }
std::vector<Action> one_f_one_b(int rank, int pp, int /*v*/, int m) {
  return one_f_one_b_order(rank, pp, m);
}
std::vector<Action> interleaved(int rank, int pp, int v, int m) {
  return interleaved_order(rank, pp, v, m);
}
std::vector<Action> zb_h1(int rank, int pp, int /*v*/, int m) { return zb_h1_order(rank, pp, m); }
}  // namespace orders

std::vector<std::vector<Action>> pipeline_compute_orders(Family family, int pp, int virtual_stages,
                                                         int microbatches) {
  GeneratorConfig config{.family = family,
                         .mesh = {.dp = 1, .pp = pp, .tp = 1},
                         .microbatches = microbatches,
                         .virtual_stages = virtual_stages};
  check_config(config);
  std::vector<std::vector<Action>> out;
  for (int r = 0; r < pp; ++r)
    out.push_back(info(family).order(r, pp, virtual_stages, microbatches));
  return out;
}

}  // namespace meshscope::schedule
