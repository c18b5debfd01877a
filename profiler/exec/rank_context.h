// What the math of one rank needs besides its stages (lives on the rank's thread), and the one way
// a compute action issues a collective of its own (a tp all-reduce, an ep all-to-all): traced as
// an inner span, announced to the watchdog while it waits.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "profiler/capture/action_tracer.h"
#include "profiler/runtime/backend.h"

namespace meshscope::exec {

struct RankContext {
  runtime::DeviceOps* dev = nullptr;
  runtime::Transport* net = nullptr;
  capture::ActionTracer* tracer = nullptr;
  const std::vector<capture::InnerInfo>* inner = nullptr;
  std::atomic<int32_t>* waiting_inner = nullptr;  // for the watchdog: inner collective in progress
  int rank = 0;
  int step = 0;
  double* loss_accum = nullptr;  // device scalar
};

// Runs `call(group)` (a Transport collective returning its TransferInfo) as the rank's InnerInfo
// number `inner`.
template <typename Call>
void run_inner(RankContext& ctx, int inner, Call&& call) {
  const capture::InnerInfo& info = (*ctx.inner)[inner];
  ctx.tracer->inner_begin(ctx.rank, ctx.step, info);
  ctx.waiting_inner->store(inner, std::memory_order_relaxed);
  const runtime::TransferInfo t = call(info.group);
  ctx.waiting_inner->store(-1, std::memory_order_relaxed);
  ctx.tracer->inner_end(ctx.rank, ctx.step, info, t.ready_ns);
}

}  // namespace meshscope::exec
