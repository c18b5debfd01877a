// A schedule that ran, replayed in the discrete-event simulator with each action priced by what
// it was measured to cost (the cpu executor's thread CPU time per action), one device per rank.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/schedule/schedule.h"
#include "traces/timeline.h"

namespace meshscope::predict {

// The measured costs the replay uses: per stage, the mean over that stage's actions (every rank,
// every microbatch) of each kind; 0 where the schedule has none.
struct MeasuredCosts {
  std::vector<std::array<int64_t, static_cast<size_t>(schedule::ActionKind::kCount)>> mean_ns;
  // One transfer: the mean SEND plus the mean RECV over every stage (on the cpu backend both are
  // memory copies, one on each side).
  int64_t transfer_ns = 0;

  int64_t of(int stage, schedule::ActionKind kind) const {
    return mean_ns[static_cast<size_t>(stage)][static_cast<size_t>(kind)];
  }
};

// `action_ns[r][i]` is what action i of rank r's program (schedule.ranks[r][i]) cost. Throws
// std::invalid_argument when the table's shape differs from the schedule's programs or a cost is
// negative.
MeasuredCosts mean_costs(const schedule::Schedule& schedule,
                         const std::vector<std::vector<int64_t>>& action_ns);

// The engine's input for that replay: a StageTiming per stage from the means (a stage with only
// I and W gets B = I + W and one with only B keeps it: the replay runs the schedule that ran,
// whose kinds were all measured), collectives priced by their stage and kind, transfers as a
// latency of transfer_ns on a link of unbounded bandwidth, every rank on its own device
// (shared_processors = 0). `schedule` and `costs` must outlive the input.
engine::EngineInput replay_input(const schedule::Schedule& schedule, const MeasuredCosts& costs);

struct MeasuredReplay {
  int64_t step_ns = 0;                 // traces::analyze's step time of the replayed Timeline
  double bubble_fraction = 0;          // traces::analyze's overall bubble (idle share, all devices)
  std::vector<double> device_bubbles;  // per device, in the Timeline's device order
  int64_t transfer_ns = 0;             // the per-transfer cost it used
  traces::Timeline timeline;           // the replayed step, shaped like the executor's
};

// Runs replay_input(schedule, mean_costs(schedule, action_ns)) and analyses the Timeline. Throws
// what mean_costs and engine::simulate throw.
MeasuredReplay replay_measured(const schedule::Schedule& schedule,
                               const std::vector<std::vector<int64_t>>& action_ns);

}  // namespace meshscope::predict
