// The compute order of the families torch.distributed.pipelining has and meshscope took from it:
// ZB-V, DualPipeV, interleaved zero bubble, looped BFS. Each follows the per-rank construction of
// torch 2.15's schedules.py (named at each function) step for step; torch's None entries (idle
// steps of its grid, which its runtime skips) are left out. tests/sim/schedule_torch_orders_test
// compares every one with the orders torch itself wrote (tests/fixtures/torch_orders).
#include <algorithm>
#include <deque>
#include <map>
#include <utility>
#include <vector>

#include "sim/schedule/action.h"

namespace meshscope::schedule::orders {
namespace {

Action act(ActionKind kind, int stage, int microbatch) {
  return Action{.kind = kind, .stage = stage, .microbatch = microbatch};
}

}  // namespace

// ScheduleLoopedBFS._calculate_single_rank_operations: every microbatch forward through each
// local stage in turn, then the backwards, last stage first and last microbatch first.
std::vector<Action> looped_bfs(int rank, int pp, int v, int m) {
  std::vector<Action> out;
  for (int c = 0; c < v; ++c) {
    for (int mb = 0; mb < m; ++mb) out.push_back(act(ActionKind::kForward, c * pp + rank, mb));
  }
  for (int c = v - 1; c >= 0; --c) {
    for (int mb = m - 1; mb >= 0; --mb)
      out.push_back(act(ActionKind::kBackward, c * pp + rank, mb));
  }
  return out;
}

// ScheduleInterleavedZeroBubble._calculate_single_rank_operations and _get_1f1b_rank_ops with
// enable_zero_bubble: warm-up (v-1) * per-round + (pp-1-rank) forwards; then F + I per step, and
// from step `rank` on the W of the oldest I; the remaining W's at the end. torch's
// _add_bubbles_to_actions only inserts idle steps, so the order is this one.
std::vector<Action> interleaved_zero_bubble(int rank, int pp, int v, int m) {
  const int rounds = std::max(1, m / pp);
  const int per_round = m / rounds;
  const int total_mb_ops = v * m;
  const int warmup = std::min((v - 1) * per_round + (pp - 1 - rank), total_mb_ops);
  const int steady = total_mb_ops - warmup;
  const int total = warmup + steady + warmup;  // the cool-down has as many ops as the warm-up
  const auto forward_stage = [&](int step) { return ((step / per_round) % v) * pp + rank; };
  const auto backward_stage = [&](int step) {
    return (v - 1 - ((step - warmup) / per_round) % v) * pp + rank;
  };
  std::map<int, int> next_f, next_i, next_w;  // stage -> next microbatch
  std::vector<int> backward_steps;
  size_t weights_done = 0;
  std::vector<Action> out;
  const auto weight = [&] {
    const int stage = backward_stage(backward_steps[weights_done++]);
    out.push_back(act(ActionKind::kWeightGrad, stage, next_w[stage]++));
  };
  for (int op = 0; op < total; ++op) {
    if (op < warmup + steady) {
      const int fs = forward_stage(op);
      out.push_back(act(ActionKind::kForward, fs, next_f[fs]++));
    }
    if (op >= warmup) {
      const int bs = backward_stage(op);
      out.push_back(act(ActionKind::kInputGrad, bs, next_i[bs]++));
      backward_steps.push_back(op);
      if (op - warmup >= rank) weight();
    }
  }
  while (weights_done < backward_steps.size()) weight();
  return out;
}

// ScheduleZBVZeroBubble._calculate_single_rank_operations: rank r holds stage r (chunk 0) and
// stage 2pp-1-r (chunk 1). It plans max(2pp - 1, m) microbatches and drops the actions on
// microbatches >= m, as torch does.
std::vector<Action> zb_v(int rank, int pp, int /*v*/, int m) {
  const int n = std::max(2 * pp - 1, m);
  const int s0 = rank, s1 = 2 * pp - 1 - rank;
  int f0 = 0, f1 = 0, b0 = 0, b1 = 0;
  std::vector<Action> out;
  const auto add = [&](ActionKind k, int stage, int mb) {
    if (mb < m) out.push_back(act(k, stage, mb));
  };
  for (int i = 0; i < 2 * (pp - rank) - 1; ++i) add(ActionKind::kForward, s0, f0++);
  for (int i = 0; i < rank; ++i) {
    add(ActionKind::kForward, s1, f1++);
    add(ActionKind::kForward, s0, f0++);
  }
  for (int i = 0; i < pp - rank; ++i) {
    add(ActionKind::kForward, s1, f1++);
    add(ActionKind::kInputGrad, s1, b1);
    add(ActionKind::kWeightGrad, s1, b1++);
  }
  while (f1 < f0 || f0 < n) {
    if (f0 < n) add(ActionKind::kForward, s0, f0++);
    add(ActionKind::kInputGrad, s0, b0);
    add(ActionKind::kWeightGrad, s0, b0++);
    add(ActionKind::kForward, s1, f1++);
    add(ActionKind::kInputGrad, s1, b1);
    add(ActionKind::kWeightGrad, s1, b1++);
  }
  int w0 = b0, w1 = b1;
  for (int i = 0; i < rank; ++i) {
    add(ActionKind::kInputGrad, s0, b0++);
    add(ActionKind::kInputGrad, s1, b1++);
  }
  for (int i = 0; i < pp - rank; ++i) {
    add(ActionKind::kInputGrad, s0, b0++);
    add(ActionKind::kWeightGrad, s0, w0++);
  }
  while (w1 < b1) add(ActionKind::kWeightGrad, s1, w1++);
  while (w0 < b0) add(ActionKind::kWeightGrad, s0, w0++);
  return out;
}

// ScheduleDualPipeV._calculate_single_rank_operations (after DeepSeek's DualPipe): eight phases
// of forwards, zero-bubble I/W pairs and overlapped F/B pairs on rank r's stages r and 2pp-1-r.
std::vector<Action> dualpipe_v(int rank, int pp, int /*v*/, int m) {
  const int s0 = rank, s1 = 2 * pp - 1 - rank;
  std::map<std::pair<int, ActionKind>, int> next;  // (stage, kind) -> next microbatch
  std::deque<std::pair<int, int>> pending_w;       // (stage, microbatch) of I's without their W
  std::vector<Action> out;
  const auto backward_done = [&](int stage) {  // a full B counts as its I and its W
    ++next[{stage, ActionKind::kInputGrad}];
    ++next[{stage, ActionKind::kWeightGrad}];
  };
  const auto add = [&](int stage, ActionKind k) {
    const ActionKind key = k == ActionKind::kBackward ? ActionKind::kInputGrad : k;
    const int mb = next[{stage, key}];
    out.push_back(act(k, stage, mb));
    if (k == ActionKind::kBackward) {
      backward_done(stage);
      return;
    }
    if (k == ActionKind::kInputGrad) pending_w.emplace_back(stage, mb);
    next[{stage, key}] = mb + 1;
  };
  const auto add_pending_w = [&] {
    if (pending_w.empty()) return;
    const auto [stage, mb] = pending_w.front();
    pending_w.pop_front();
    out.push_back(act(ActionKind::kWeightGrad, stage, mb));
    ++next[{stage, ActionKind::kWeightGrad}];
  };
  const auto add_overlap = [&](int forward_stage, int backward_stage) {
    const int fmb = next[{forward_stage, ActionKind::kForward}];
    const int bmb = next[{backward_stage, ActionKind::kInputGrad}];
    Action f = act(ActionKind::kForward, forward_stage, fmb);
    f.overlap_next = true;
    out.push_back(f);
    out.push_back(act(ActionKind::kBackward, backward_stage, bmb));
    next[{forward_stage, ActionKind::kForward}] = fmb + 1;
    backward_done(backward_stage);
  };
  for (int i = 0; i < (pp - rank - 1) * 2; ++i) add(s0, ActionKind::kForward);  // 1: F0
  for (int i = 0; i < rank + 1; ++i) {                                          // 2: F0 F1
    add(s0, ActionKind::kForward);
    add(s1, ActionKind::kForward);
  }
  for (int i = 0; i < pp - rank - 1; ++i) {  // 3: I1 W F1
    add(s1, ActionKind::kInputGrad);
    add_pending_w();
    add(s1, ActionKind::kForward);
  }
  for (int i = 0; i < m - pp * 2 + rank + 1; ++i) {  // 4: (F0;B1) (F1;B0)
    if (i == 0 && rank == pp - 1) {
      // torch: "We don't overlap these two chunks to further reduce bubble size."
      add(s0, ActionKind::kForward);
      add(s1, ActionKind::kBackward);
    } else {
      add_overlap(s0, s1);
    }
    add_overlap(s1, s0);
  }
  for (int i = 0; i < pp - rank - 1; ++i) {  // 5: B1 (F1;B0)
    add(s1, ActionKind::kBackward);
    add_overlap(s1, s0);
  }
  const int step6 = rank + 1;  // 6: B1 B0, the second half as I (zero bubble)
  bool zero_bubble = false;
  for (int i = 0; i < step6; ++i) {
    if (i == step6 / 2 && rank % 2 == 1) zero_bubble = true;
    add(s1, zero_bubble ? ActionKind::kInputGrad : ActionKind::kBackward);
    if (i == step6 / 2 && rank % 2 == 0) zero_bubble = true;
    add(s0, zero_bubble ? ActionKind::kInputGrad : ActionKind::kBackward);
  }
  for (int i = 0; i < pp - rank - 1; ++i) {  // 7: W B0
    add_pending_w();
    add(s0, zero_bubble ? ActionKind::kInputGrad : ActionKind::kBackward);
  }
  for (int i = 0; i < rank + 1; ++i) add_pending_w();  // 8: W
  return out;
}

}  // namespace meshscope::schedule::orders
