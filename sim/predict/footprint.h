// What a simulation would hold in host memory, estimated before it is built, so a configuration
// that cannot fit is refused with the key to change instead of dying in std::bad_alloc.
#pragma once

#include <cstdint>

namespace meshscope::predict {

// Upper bound of the actions a generated schedule gives `ranks` ranks holding `virtual_stages`
// chunks each, `microbatches` per replica: F, B (or I and W), a send and a receive each way per
// microbatch and chunk (7), and the per-step collectives and STEP of each chunk.
double schedule_actions(double ranks, double microbatches, double virtual_stages);

// Host bytes per action: the Action (schedule.h), its compiled engine Op (program.h), the
// engine's per-op state and the generator's growth slack; with a Timeline, its span too.
double bytes_per_action(bool timeline);

// Host bytes building one layer takes at its peak (a GPT layer, an mlp or moe block): measured,
// footprint.cpp says how.
double gpt_layer_bytes();
double mlp_layer_bytes();

}  // namespace meshscope::predict
