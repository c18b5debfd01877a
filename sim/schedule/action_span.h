// How an action appears in a Timeline — its span kind, phase and label — one rule for the
// executor (profiler/exec/rank_plan.cpp) and the simulator (sim/engine/recorder.cpp), so a
// measured and a simulated trace of the same schedule name and colour their spans alike.
#pragma once

#include <string>

#include "sim/schedule/action.h"
#include "traces/timeline.h"

namespace meshscope::schedule {

// send / recv / collective / compute (F, B, I, W and STEP).
traces::SpanKind span_kind_of(ActionKind k);

// F and its transfers: forward; B and its transfers: backward; I, W: their own; the optimizer
// step and the gradient synchronisation collectives (all-reduce, reduce-scatter): optimizer;
// anything else (all-gather, all-to-all): none.
traces::Phase phase_of(ActionKind k);

// "F s2 mb5", "SEND_F s0 mb1", "ALLREDUCE(dp) s3", "STEP s1".
std::string span_label(const Action& a);

}  // namespace meshscope::schedule
