// Estimating a simulation's host memory before building it.
#include "sim/predict/footprint.h"

#include "sim/engine/program.h"
#include "sim/model/stage_cost.h"
#include "sim/model/workload.h"
#include "sim/schedule/action.h"
#include "traces/timeline.h"

namespace meshscope::predict {

double schedule_actions(double ranks, double microbatches, double virtual_stages) {
  // Per chunk and step: up to 4 collectives (ZeRO's gathers and reductions, dp all-reduce) + STEP.
  return ranks * virtual_stages * (7 * microbatches + 5);
}

double bytes_per_action(bool timeline) {
  // The schedule's vector grows by doubling (up to 2x its size), the engine copies nothing else
  // per action beyond its state byte and its place in a send or collective list: 77 bytes, above
  // the 57 measured (peak RSS 353 MB for 6.06 M actions: `/usr/bin/time -f %M
  // build/bench/sim_predict_bench --benchmark_filter=BM_Predict16k/replicas_once:0`, 2026-12-01).
  const double b = 2.0 * sizeof(schedule::Action) + sizeof(engine::Op) + 1 + sizeof(int32_t);
  return timeline ? b + sizeof(traces::Span) : b;
}

double gpt_layer_bytes() { return 32.0 * sizeof(model::OpCost); }

double mlp_layer_bytes() {
  return sizeof(model::Unit) + 2.0 * sizeof(model::LinearSpec) + 2 * sizeof(model::OpCost);
}

}  // namespace meshscope::predict
