// Estimating a simulation's host memory before building it.
#include "sim/predict/footprint.h"

#include "sim/engine/program.h"
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

// What building a layer took at its peak, measured: `/usr/bin/time -f %M meshscope predict` on
// tiny models of 20,000 to 600,000 layers (2026-12-05), peak resident memory over layers: a GPT
// layer 4.5 to 12.3 KiB (dp, pp 4 with 1F1B, tp 2 with full recomputation, cp 2 with op-selective
// recomputation, interleaved with userbuffers), 14.5 KiB with 4 experts over ep 2 (the most
// measured); an mlp block 3.0 to 3.2 KiB, a moe block 8.0 to 8.2 KiB. The peak is several times the
// records themselves (32 OpCosts of 88 bytes a GPT layer): a profile at 20,000 layers finds them
// copied into each stage's pass lists, copied again as the stage list grows, and built again for
// each alternative a config that does not fit is priced with. The bounds below are the most
// measured plus a fifth.
double gpt_layer_bytes() { return 18.0 * 1024; }

double mlp_layer_bytes() { return 10.0 * 1024; }

}  // namespace meshscope::predict
