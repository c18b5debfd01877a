// Predictions against the development set of published training runs (docs/ACCURACY.md section 2):
// each row's error stays within the bound recorded for it, and the residuals that `predict`
// prints its ranges from (the framework profiles' "residuals") are the ones the rows give now.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "sim/cost/framework.h"
#include "sim/cost/hardware.h"
#include "sim/predict/config.h"
#include "sim/predict/simulate.h"

namespace meshscope::predict {
namespace {

enum class Metric { kStepSeconds, kTflopsPerGpu, kTokensPerSecondPerGpu };

struct Row {
  const char* file;  // sim/predict/configs/<file>: the settings the source states
  Metric metric;     // what the source publishes
  double published;
  double bound;  // |predicted / published - 1| recorded in docs/ACCURACY.md, rounded up
  // What the model says about memory. Every row ran, so true is right; a false records a known
  // miss of the memory model (stated beside the row), kept visible instead of hidden.
  bool fits = true;
  // Held back (set 1 to 7; 0: development): added after a model change and evaluated once, an
  // honest test of the model and of its ranges. Not counted in the development set's error nor in
  // the profiles' residuals.
  int held_set = 0;
  bool held_back() const { return held_set > 0; }
};

// Sources: Korthikanti et al. 2022 Table 5 (iteration time, present work; Megatron-LM's README
// gives the same runs' MFU, which reproduces each time within 0.4%; the full-recompute
// baseline's times were not found in a stored source and are not used); Llama Team 2024 Table 4
// (TFLOP/s per GPU); llm-foundry scripts/train/benchmarking/ README.md (tokens/s/GPU); torchtitan
// docs/performance.md (tokens/s per GPU); IBM fms-fsdp README.md (tokens/s/GPU); Dao-AILab
// flash-attention training/README.md (tokens/s on 8 GPUs); NVIDIA's DGX Cloud benchmarking
// recipes, dgxc-benchmarking llama3.1/README_*.md (seconds per step).
const std::vector<Row>& rows() {
  static const std::vector<Row> r = {
      {"korthikanti-22b.json", Metric::kStepSeconds, 1.10, 0.05},
      {"korthikanti-175b.json", Metric::kStepSeconds, 13.75, 0.01},
      {"korthikanti-530b.json", Metric::kStepSeconds, 37.83, 0.02},
      {"korthikanti-1t.json", Metric::kStepSeconds, 71.49, 0.02},
      // Interleaved, V = 8 (the paper's section 3.3.2). With 32 microbatches per DP group the model
      // prices Megatron's interleaved warm-up (143 chunks in flight on rank 1), 82.5 GiB: more than
      // 80 GiB. Meta's modified schedule bounds the microbatches in flight (its N, Figure 6),
      // which the simulator's interleaved schedule does not have.
      {"llama3-405b.json", Metric::kTflopsPerGpu, 430, 0.11, false},
      {"llama3-405b-16k.json", Metric::kTflopsPerGpu, 400, 0.10},
      {"llmfoundry-mpt1b-s2048-8xa100.json", Metric::kTokensPerSecondPerGpu, 20513, 0.10},
      {"llmfoundry-mpt3b-s2048-8xa100.json", Metric::kTokensPerSecondPerGpu, 10811, 0.09},
      {"llmfoundry-mpt7b-s2048-8xa100.json", Metric::kTokensPerSecondPerGpu, 4641, 0.09},
      {"llmfoundry-mpt13b-s2048-8xa100.json", Metric::kTokensPerSecondPerGpu, 2262, 0.12},
      {"llmfoundry-mpt30b-s2048-8xa100.json", Metric::kTokensPerSecondPerGpu, 916, 0.05},
      {"llmfoundry-mpt7b-s8192-8xa100.json", Metric::kTokensPerSecondPerGpu, 3206, 0.06},
      {"llmfoundry-mpt70b-s2048-64xa100.json", Metric::kTokensPerSecondPerGpu, 410, 0.09},
      {"llmfoundry-mpt7b-s2048-8xh100.json", Metric::kTokensPerSecondPerGpu, 10643, 0.03},
      {"llmfoundry-mpt13b-s2048-8xh100.json", Metric::kTokensPerSecondPerGpu, 4792, 0.08},
      {"llmfoundry-mpt13b-s2048-64xh100.json", Metric::kTokensPerSecondPerGpu, 4800, 0.11},
      {"llmfoundry-mpt3b-s4096-8xh100.json", Metric::kTokensPerSecondPerGpu, 20964, 0.09},
      {"llmfoundry-mpt30b-s2048-8xh100.json", Metric::kTokensPerSecondPerGpu, 2002, 0.03},
      {"torchtitan-llama3-8b-64xa100.json", Metric::kTokensPerSecondPerGpu, 2973, 0.03},
      {"torchtitan-llama3-70b-64xa100.json", Metric::kTokensPerSecondPerGpu, 331, 0.04},
      {"torchtitan-llama2-13b-64xa100.json", Metric::kTokensPerSecondPerGpu, 2162, 0.01},
      {"torchtitan-llama2-70b-64xa100.json", Metric::kTokensPerSecondPerGpu, 353, 0.04},
      // IBM fms-fsdp README, the table stating "A100 80G 128 GPUs with 400Gbps".
      {"fmsfsdp-llama2-7b-hsdp-128xa100.json", Metric::kTokensPerSecondPerGpu, 3700, 0.08},
      {"fmsfsdp-llama2-34b-128xa100.json", Metric::kTokensPerSecondPerGpu, 700, 0.07},
      // Dao-AILab/flash-attention training/README.md, "Training speed" (commit 4a6eaa9, November
      // 2022): tokens/s on 8 x A100 80GB, over 8.
      {"flashattn-gpt3-125m-8xa100.json", Metric::kTokensPerSecondPerGpu, 1310e3 / 8, 0.08},
      {"flashattn-gpt3-355m-8xa100.json", Metric::kTokensPerSecondPerGpu, 503e3 / 8, 0.06},
      {"flashattn-gpt3-760m-8xa100.json", Metric::kTokensPerSecondPerGpu, 245e3 / 8, 0.09},
      {"flashattn-gpt3-1.3b-8xa100.json", Metric::kTokensPerSecondPerGpu, 169e3 / 8, 0.06},
      {"flashattn-gpt3-2.7b-8xa100.json", Metric::kTokensPerSecondPerGpu, 85e3 / 8, 0.08},
      // NVIDIA/dgxc-benchmarking at 143b90d, llama3.1/README_{8b,70b,405b}.md, the "24.09 BF16"
      // tables: seconds per step on H100, the smallest and the largest scale of each (chosen and
      // committed before they were first evaluated, 1c7d689).
      {"nemo-llama31-8b-8xh100.json", Metric::kStepSeconds, 12.91, 0.04},
      {"nemo-llama31-8b-128xh100.json", Metric::kStepSeconds, 13.10, 0.04},
      {"nemo-llama31-70b-64xh100.json", Metric::kStepSeconds, 14.72, 0.07},
      {"nemo-llama31-70b-2048xh100.json", Metric::kStepSeconds, 14.98, 0.07},
      {"nemo-llama31-405b-576xh100.json", Metric::kStepSeconds, 17.20, 0.05},
      {"nemo-llama31-405b-2304xh100.json", Metric::kStepSeconds, 17.62, 0.07},
      // nemo_megatron/README_175b.md at the same commit, "NeMo Megatron 24.11 BF16": GPT-3 175B,
      // the smallest and the largest scale (committed before first evaluated, 7d8f68d); its
      // configure.sh sets the attention backend and NVLS (item 30, 41356bc).
      {"nemo-gpt3-175b-128xh100.json", Metric::kStepSeconds, 8.91, 0.12},
      {"nemo-gpt3-175b-2048xh100.json", Metric::kStepSeconds, 9.02, 0.11},
      // The same README at 8f5cbb3 (GSW 25.02, NeMo 24.12): the recipe's files change the run
      // (cuDNN attention, VP 6 in its yaml), so its smallest and largest scale are rows of their
      // own (committed before first evaluated, 5640fc6).
      {"nemo-gpt3-175b-2412-128xh100.json", Metric::kStepSeconds, 8.309, 0.07},
      {"nemo-gpt3-175b-2412-2048xh100.json", Metric::kStepSeconds, 8.49, 0.08},
      // nemotron/README_15b.md at 8f5cbb3, "Nemotron4 15b BF16": the smallest and the largest
      // scale (committed before first evaluated, 363eeac).
      {"nemo-nemotron4-15b-16xh100.json", Metric::kStepSeconds, 2.812, 0.06},
      {"nemo-nemotron4-15b-2048xh100.json", Metric::kStepSeconds, 2.887, 0.07},
      // nemotron/README_340b.md at 143b90d (the same table at 35a9aec and 8f5cbb3), "Nemotron4
      // 340b 24.11 BF16": the smallest and the largest scale (committed before first evaluated,
      // 0da3555; its selective recomputation priced by item 38 before that evaluation).
      {"nemo-nemotron4-340b-128xh100.json", Metric::kStepSeconds, 4.61, 0.01},
      {"nemo-nemotron4-340b-2048xh100.json", Metric::kStepSeconds, 4.84, 0.02},
      {"torchtitan-llama2-13b-opsac-64xa100.json", Metric::kTokensPerSecondPerGpu, 1904, 0.01, true,
       1},
      {"torchtitan-llama2-70b-opsac-b1-64xa100.json", Metric::kTokensPerSecondPerGpu, 355, 0.14,
       true, 1},
      // Held back (docs/ACCURACY.md): added after the last model change and evaluated once; the
      // two torchtitan rows above are held back too.
      {"llmfoundry-mpt3b-s8192-8xa100.json", Metric::kTokensPerSecondPerGpu, 7695, 0.03, true, 1},
      {"llmfoundry-mpt13b-s4096-8xa100.json", Metric::kTokensPerSecondPerGpu, 2060, 0.05, true, 1},
      {"llmfoundry-mpt1b-s2048-8xh100.json", Metric::kTokensPerSecondPerGpu, 45455, 0.05, true, 1},
      {"llmfoundry-mpt7b-s4096-8xh100.json", Metric::kTokensPerSecondPerGpu, 8611, 0.13, true, 1},
      // Held back, second set: added after the sustained-clock change (catalog `sustained`).
      {"llmfoundry-mpt3b-s2048-16xh100.json", Metric::kTokensPerSecondPerGpu, 24142, 0.04, true, 2},
      {"llmfoundry-mpt13b-s4096-8xh100.json", Metric::kTokensPerSecondPerGpu, 4717, 0.12, true, 2},
      {"llmfoundry-mpt7b-s4096-8xa100.json", Metric::kTokensPerSecondPerGpu, 3684, 0.02, true, 2},
      {"llmfoundry-mpt1b-s8192-8xa100.json", Metric::kTokensPerSecondPerGpu, 13814, 0.04, true, 2},
      // Held back, third set: chosen before the ZeRO-3 copy-pass change (framework
      // sharded_copies) and evaluated once after the A100 sustained-share change.
      {"llmfoundry-mpt3b-s4096-8xa100.json", Metric::kTokensPerSecondPerGpu, 9457, 0.07, true, 3},
      {"llmfoundry-mpt1b-s4096-8xa100.json", Metric::kTokensPerSecondPerGpu, 17807, 0.07, true, 3},
      {"llmfoundry-mpt13b-s8192-8xa100.json", Metric::kTokensPerSecondPerGpu, 1795, 0.07, true, 3},
      {"llmfoundry-mpt30b-s4096-8xa100.json", Metric::kTokensPerSecondPerGpu, 814, 0.04, true, 3},
      {"llmfoundry-mpt3b-s8192-8xh100.json", Metric::kTokensPerSecondPerGpu, 16578, 0.16, true, 3},
      {"llmfoundry-mpt1b-s4096-8xh100.json", Metric::kTokensPerSecondPerGpu, 38535, 0.07, true, 3},
      {"llmfoundry-mpt7b-s8192-8xh100.json", Metric::kTokensPerSecondPerGpu, 6935, 0.16, true, 3},
      {"llmfoundry-mpt13b-s2048-32xh100.json", Metric::kTokensPerSecondPerGpu, 4811, 0.11, true, 3},
      {"llmfoundry-mpt30b-s2048-16xh100.json", Metric::kTokensPerSecondPerGpu, 2263, 0.05, true, 3},
      // Held back, fourth set: chosen before the optimizer-step, per-layer ZeRO-3 collective and
      // Megatron optimizer changes, configs committed unevaluated, evaluated once after them.
      {"fmsfsdp-llama2-7b-hsdp-96xh100.json", Metric::kTokensPerSecondPerGpu, 7500, 0.10, true, 4},
      {"fmsfsdp-llama2-34b-96xh100.json", Metric::kTokensPerSecondPerGpu, 1550, 0.05, true, 4},
      {"torchtitan-llama3-8b-sellayer-64xa100.json", Metric::kTokensPerSecondPerGpu, 2904, 0.01,
       true, 4},
      {"torchtitan-llama2-13b-sellayer-64xa100.json", Metric::kTokensPerSecondPerGpu, 1914, 0.01,
       true, 4},
      // Held back, fifth set: every row of llm-foundry's H100 BF16 table at seq >= 16384 and its
      // two 70b rows, chosen by that rule and committed unevaluated (1fce762), evaluated once after
      // item 17.
      {"llmfoundry-mpt13b-s32768-8xh100.json", Metric::kTokensPerSecondPerGpu, 1976, 0.29, true, 5},
      {"llmfoundry-mpt13b-s16384-8xh100.json", Metric::kTokensPerSecondPerGpu, 2985, 0.23, true, 5},
      {"llmfoundry-mpt7b-s65536-8xh100.json", Metric::kTokensPerSecondPerGpu, 1956, 0.37, true, 5},
      {"llmfoundry-mpt7b-s32768-8xh100.json", Metric::kTokensPerSecondPerGpu, 3318, 0.32, true, 5},
      {"llmfoundry-mpt3b-s65536-8xh100.json", Metric::kTokensPerSecondPerGpu, 3262, 0.37, true, 5},
      {"llmfoundry-mpt3b-s32768-8xh100.json", Metric::kTokensPerSecondPerGpu, 5873, 0.35, true, 5},
      {"llmfoundry-mpt3b-s16384-8xh100.json", Metric::kTokensPerSecondPerGpu, 11152, 0.23, true, 5},
      {"llmfoundry-mpt1b-s65536-8xh100.json", Metric::kTokensPerSecondPerGpu, 5506, 0.37, true, 5},
      {"llmfoundry-mpt1b-s32768-8xh100.json", Metric::kTokensPerSecondPerGpu, 12025, 0.32, true, 5},
      {"llmfoundry-mpt1b-s16384-8xh100.json", Metric::kTokensPerSecondPerGpu, 19649, 0.23, true, 5},
      {"llmfoundry-mpt760m-s32768-8xh100.json", Metric::kTokensPerSecondPerGpu, 16291, 0.31, true,
       5},
      {"llmfoundry-mpt760m-s16384-8xh100.json", Metric::kTokensPerSecondPerGpu, 27815, 0.25, true,
       5},
      {"llmfoundry-mpt70b-s2048-64xh100.json", Metric::kTokensPerSecondPerGpu, 1039, 0.05, true, 5},
      {"llmfoundry-mpt70b-s2048-32xh100.json", Metric::kTokensPerSecondPerGpu, 882, 0.06, true, 5},
      // Held back, sixth set: every row of llm-foundry's A100 80GB table at seq >= 16384, chosen by
      // that rule and committed unevaluated (428794a), evaluated once after set 5.
      {"llmfoundry-mpt125m-s16384-8xa100.json", Metric::kTokensPerSecondPerGpu, 60040, 0.01, true,
       6},
      {"llmfoundry-mpt125m-s32768-8xa100.json", Metric::kTokensPerSecondPerGpu, 36407, 0.08, true,
       6},
      {"llmfoundry-mpt125m-s65536-8xa100.json", Metric::kTokensPerSecondPerGpu, 20368, 0.12, true,
       6},
      {"llmfoundry-mpt13b-s16384-8xa100.json", Metric::kTokensPerSecondPerGpu, 1431, 0.10, true, 6},
      {"llmfoundry-mpt13b-s32768-8xa100.json", Metric::kTokensPerSecondPerGpu, 1016, 0.13, true, 6},
      {"llmfoundry-mpt1b-s16384-8xa100.json", Metric::kTokensPerSecondPerGpu, 9956, 0.04, true, 6},
      {"llmfoundry-mpt1b-s32768-8xa100.json", Metric::kTokensPerSecondPerGpu, 6275, 0.08, true, 6},
      {"llmfoundry-mpt1b-s65536-8xa100.json", Metric::kTokensPerSecondPerGpu, 3044, 0.15, true, 6},
      {"llmfoundry-mpt350m-s16384-8xa100.json", Metric::kTokensPerSecondPerGpu, 23559, 0.06, true,
       6},
      {"llmfoundry-mpt350m-s32768-8xa100.json", Metric::kTokensPerSecondPerGpu, 13652, 0.08, true,
       6},
      {"llmfoundry-mpt350m-s65536-8xa100.json", Metric::kTokensPerSecondPerGpu, 7524, 0.11, true,
       6},
      {"llmfoundry-mpt3b-s16384-8xa100.json", Metric::kTokensPerSecondPerGpu, 5529, 0.03, true, 6},
      {"llmfoundry-mpt3b-s32768-8xa100.json", Metric::kTokensPerSecondPerGpu, 3029, 0.11, true, 6},
      {"llmfoundry-mpt3b-s65536-8xa100.json", Metric::kTokensPerSecondPerGpu, 1767, 0.14, true, 6},
      {"llmfoundry-mpt760m-s16384-8xa100.json", Metric::kTokensPerSecondPerGpu, 14274, 0.04, true,
       6},
      {"llmfoundry-mpt760m-s32768-8xa100.json", Metric::kTokensPerSecondPerGpu, 8802, 0.09, true,
       6},
      {"llmfoundry-mpt760m-s65536-8xa100.json", Metric::kTokensPerSecondPerGpu, 4143, 0.14, true,
       6},
      {"llmfoundry-mpt7b-s16384-8xa100.json", Metric::kTokensPerSecondPerGpu, 2453, 0.08, true, 6},
      {"llmfoundry-mpt7b-s32768-8xa100.json", Metric::kTokensPerSecondPerGpu, 1672, 0.10, true, 6},
      {"llmfoundry-mpt7b-s65536-8xa100.json", Metric::kTokensPerSecondPerGpu, 1013, 0.12, true, 6},
      // Set 7: Table 4's third row (CP 16, seq 131,072), the one the development set lacks,
      // committed unevaluated (0652271). Its TFLOP/s are compared as the other rows' are, with
      // the attention counted over the full seq x seq (docs/ACCURACY.md, set 7: counted causally,
      // as the model times it, the row would be -2.7%). Predicted 79.9 GiB of 80 (83.9 before the
      // llama3-2024 profile dropped the dropout masks its architecture has none of).
      {"llama3-405b-cp16.json", Metric::kTflopsPerGpu, 380, 0.31, true, 7},
      // Set 8: the rows of fms-fsdp's README at 0d31998 whose settings no development row has,
      // committed unevaluated (2e4b6a7); the network its later revision states for its A100 runs.
      {"fmsfsdp-llama2-13b-hsdp-b1-128xa100.json", Metric::kTokensPerSecondPerGpu, 1700, 0.13, true,
       8},
      {"fmsfsdp-llama2-34b-b8-128xa100.json", Metric::kTokensPerSecondPerGpu, 772, 0.06, true, 8},
      {"fmsfsdp-llama2-70b-b6-128xa100.json", Metric::kTokensPerSecondPerGpu, 380, 0.07, true, 8},
      // Set 9: NVIDIA's FP8 tables beside the development set's BF16 ones (dgxc-benchmarking, the
      // same commits, scales and settings, with the recipes' FP8 options), committed unevaluated
      // with the rule they test (docs/ACCURACY.md item 50, d45e06b).
      {"nemo-llama31-8b-8xh100-fp8.json", Metric::kStepSeconds, 9.67, 0.09, true, 9},
      {"nemo-llama31-8b-128xh100-fp8.json", Metric::kStepSeconds, 9.82, 0.09, true, 9},
      {"nemo-llama31-70b-64xh100-fp8.json", Metric::kStepSeconds, 11.01, 0.12, true, 9},
      {"nemo-llama31-70b-2048xh100-fp8.json", Metric::kStepSeconds, 11.39, 0.13, true, 9},
      {"nemo-llama31-405b-576xh100-fp8.json", Metric::kStepSeconds, 11.24, 0.02, true, 9},
      {"nemo-llama31-405b-2304xh100-fp8.json", Metric::kStepSeconds, 12.35, 0.08, true, 9},
      {"nemo-gpt3-175b-128xh100-fp8.json", Metric::kStepSeconds, 5.92, 0.12, true, 9},
      {"nemo-gpt3-175b-2048xh100-fp8.json", Metric::kStepSeconds, 6.24, 0.15, true, 9},
      {"nemo-gpt3-175b-2412-128xh100-fp8.json", Metric::kStepSeconds, 5.626, 0.12, true, 9},
      {"nemo-gpt3-175b-2412-2048xh100-fp8.json", Metric::kStepSeconds, 5.96, 0.16, true, 9},
      {"nemo-nemotron4-15b-16xh100-fp8.json", Metric::kStepSeconds, 2.039, 0.01, true, 9},
      {"nemo-nemotron4-15b-2048xh100-fp8.json", Metric::kStepSeconds, 2.12, 0.02, true, 9},
      {"nemo-nemotron4-340b-128xh100-fp8.json", Metric::kStepSeconds, 3.16, 0.05, true, 9},
      {"nemo-nemotron4-340b-2048xh100-fp8.json", Metric::kStepSeconds, 3.49, 0.01, true, 9},
  };
  return r;
}

// The held-back sets (Row::held_set 1 to kHeldBackSets).
constexpr int kHeldBackSets = 9;

// How many of the 75 held-back rows fall inside the range printed for them (docs/ACCURACY.md).
constexpr int kHeldBackInsideTheirRange = 26;
// Of them, those longer than every development run behind their range, and how many of those fall
// inside it nonetheless.
constexpr int kHeldBackBeyondTheirLongestSequence = 35;
constexpr int kHeldBackBeyondAndInside = 0;

struct Result {
  Summary summary;
  std::string framework;
  int64_t seq = 0;   // the row's sequence length
  double error = 0;  // predicted step time / published step time - 1
  // The peak the row's own tables count its MFU against over the summary's (the bf16 peak): an
  // FP8 row's publishers count it against the FP8 peak (NVIDIA's recipe tables: the 8B FP8 row's
  // 39.63% MFU is its model FLOPs over 1,979 TFLOP/s an H100), twice the bf16 one.
  double peak_over_summarys = 1;
};

Result predict_row(const Row& r) {
  const std::string path = std::string(MESHSCOPE_SOURCE_DIR) + "/sim/predict/configs/" + r.file;
  const PredictConfig c = parse_config(load_json_file(path), path);
  Result out;
  out.summary = simulate(c, {.build_timeline = false}).summary;
  out.framework = c.framework;
  out.seq = c.gpt.seq;
  if (c.fp8) {
    const cost::Hardware hw = cost::find_hardware(c.gpu);
    out.peak_over_summarys = hw.peak_fp8 / hw.peak(c.precision);
  }
  const Summary& s = out.summary;
  switch (r.metric) {
    case Metric::kStepSeconds:
      out.error = s.step_time_s / r.published - 1;
      break;
    case Metric::kTflopsPerGpu:
      out.error = r.published / s.tflops_per_gpu - 1;
      break;
    case Metric::kTokensPerSecondPerGpu:
      out.error = r.published / (s.tokens_per_s / s.gpus) - 1;
      break;
  }
  return out;
}

std::vector<Result>& results() {
  static std::vector<Result> all = [] {
    std::vector<Result> v;
    for (const Row& r : rows()) v.push_back(predict_row(r));
    return v;
  }();
  return all;
}

TEST(PredictPublished, EveryRowStaysWithinItsRecordedError) {
  double sum[kHeldBackSets + 1] = {};  // by set: 0 development, 1.. held back
  int count[kHeldBackSets + 1] = {};
  for (size_t i = 0; i < rows().size(); ++i) {
    const Row& r = rows()[i];
    const Result& res = results()[i];
    std::printf("%-40s %-18s %-10s predicted step %.4g s, error %+.3f%%\n", r.file,
                res.framework.c_str(), res.summary.hardware.c_str(), res.summary.step_time_s,
                100 * res.error);
    sum[r.held_set] += std::fabs(res.error);
    ++count[r.held_set];
    EXPECT_LE(std::fabs(res.error), r.bound) << r.file;
    EXPECT_EQ(res.summary.fits, r.fits) << r.file;
  }
  std::printf("development set: mean |error| over %d rows: %.2f%%\n", count[0],
              100 * sum[0] / count[0]);
  double held = 0;
  int held_rows = 0;
  for (int set = 1; set <= kHeldBackSets; ++set) {
    held += sum[set];
    held_rows += count[set];
  }
  std::printf("held back: mean |error| over %d rows: %.2f%%\n", held_rows, 100 * held / held_rows);
  for (int set = 1; set <= kHeldBackSets; ++set)
    std::printf("held back, set %d: mean |error| over %d rows: %.2f%%\n", set, count[set],
                100 * sum[set] / count[set]);
}

// The range a profile stores for a framework on a GPU (cost::Residuals low..high): an 80%
// prediction interval for the residual of a new run, from the development rows (docs/ACCURACY.md,
// "Ranges"): the group's mean residual m over its n rows, plus and minus t * s * sqrt(1 + 1/n),
// where s is the within-group standard deviation pooled over every group (N rows, G groups,
// N - G degrees of freedom) and t Student's 90th percentile for them (Cornish-Fisher from the
// normal's 1.2816: z + (z^3 + z) / (4 dof), within 0.1% of the tabled value at 22 dof).
TEST(PredictPublished, TheProfilesResidualsAreTheDevelopmentSetsOwn) {
  // Residual = published / predicted step time - 1 = 1 / (1 + error) - 1.
  std::map<std::pair<std::string, std::string>, std::vector<double>> groups;
  std::map<std::pair<std::string, std::string>, int64_t> max_seq;
  int rows_seen = 0;
  for (size_t i = 0; i < rows().size(); ++i) {
    if (rows()[i].held_back()) continue;
    const Result& res = results()[i];
    const auto key = std::make_pair(res.framework, res.summary.hardware);
    groups[key].push_back(1 / (1 + res.error) - 1);
    max_seq[key] = std::max(max_seq[key], res.seq);
    ++rows_seen;
  }
  auto mean = [](const std::vector<double>& v) {
    double sum = 0;
    for (double x : v) sum += x;
    return sum / static_cast<double>(v.size());
  };
  double squares = 0;
  for (const auto& [key, v] : groups) {
    const double m = mean(v);
    for (double x : v) squares += (x - m) * (x - m);
  }
  const int dof = rows_seen - static_cast<int>(groups.size());
  ASSERT_GT(dof, 0);
  const double pooled_sd = std::sqrt(squares / dof);
  const double z = 1.2815515655446004;  // the standard normal's 90th percentile
  const double t = z + (z * z * z + z) / (4.0 * dof);
  std::printf("ranges: %d development rows in %zu groups, pooled sd %.4f, t(0.9, %d) %.4f\n",
              rows_seen, groups.size(), pooled_sd, dof, t);
  for (const auto& [key, v] : groups) {
    const double half = t * pooled_sd * std::sqrt(1 + 1.0 / static_cast<double>(v.size()));
    const double low = mean(v) - half, high = mean(v) + half;
    std::printf("  %s on %s: %zu rows, low %.4f, high %.4f\n", key.first.c_str(),
                key.second.c_str(), v.size(), low, high);
    const cost::Framework f = cost::find_framework(key.first);
    const auto it = f.residuals.find(key.second);
    ASSERT_NE(it, f.residuals.end())
        << key.first << " has no residuals for " << key.second << ": want low " << low << " high "
        << high << " rows " << v.size();
    EXPECT_NEAR(it->second.low, low, 0.005) << key.first << " on " << key.second;
    EXPECT_NEAR(it->second.high, high, 0.005) << key.first << " on " << key.second;
    EXPECT_EQ(it->second.rows, static_cast<int>(v.size())) << key.first << " on " << key.second;
    EXPECT_EQ(it->second.max_seq, max_seq[key]) << key.first << " on " << key.second;
  }
}

// A held-back row's residual (published / predicted step time - 1) and whether it falls inside the
// range `predict` prints for it.
double residual_of(const Result& res) { return 1 / (1 + res.error) - 1; }
bool inside_range(const Result& res) {
  const Summary& s = res.summary;
  const double r = residual_of(res);
  return r >= s.step_time_s_low / s.step_time_s - 1 - 1e-9 &&
         r <= s.step_time_s_high / s.step_time_s - 1 + 1e-9;
}

TEST(PredictPublished, HeldBackRowsAgainstTheRangesPrinted) {
  // Reported, not asserted beyond the count: whether each held-back run fell inside the range
  // `predict` prints for it (the summary's step-time range: its framework's residuals on its
  // hardware, else the framework's widest, else every profile's; docs/ACCURACY.md gives the
  // outcome).
  int inside = 0, total = 0, beyond = 0, beyond_inside = 0;
  for (size_t i = 0; i < rows().size(); ++i) {
    if (!rows()[i].held_back()) continue;
    const Result& res = results()[i];
    const Summary& s = res.summary;
    const double residual = residual_of(res);
    const double low = s.step_time_s_low / s.step_time_s - 1;
    const double high = s.step_time_s_high / s.step_time_s - 1;
    const bool in = inside_range(res);
    std::printf("%-44s residual %+.3f%%, range %+.1f%% .. %+.1f%% (%s): %s%s\n", rows()[i].file,
                100 * residual, 100 * low, 100 * high, s.range_basis.c_str(),
                in ? "inside" : "outside",
                s.range_beyond_seq ? ", beyond the range's longest sequence" : "");
    inside += in;
    ++total;
    // A run longer than every development run behind its range is flagged (range_beyond_seq);
    // exactly those are the sequences the range was not measured on.
    EXPECT_EQ(s.range_beyond_seq, res.seq > s.range_max_seq && s.range_max_seq > 0)
        << rows()[i].file;
    beyond += s.range_beyond_seq;
    beyond_inside += s.range_beyond_seq && in;
  }
  std::printf(
      "held back: %d of %d inside their range; beyond its longest sequence %d of %d, "
      "within it %d of %d\n",
      inside, total, beyond_inside, beyond, inside - beyond_inside, total - beyond);
  EXPECT_EQ(total, 75);
  EXPECT_EQ(inside, kHeldBackInsideTheirRange);
  EXPECT_EQ(beyond, kHeldBackBeyondTheirLongestSequence);
  EXPECT_EQ(beyond_inside, kHeldBackBeyondAndInside);
}

// A percentage as docs/ACCURACY.md writes it ("−3.9%", "+5.4%"; U+2212 for minus); NAN otherwise.
double doc_percent(std::string cell) {
  for (size_t at; (at = cell.find("\u2212")) != std::string::npos;) cell.replace(at, 3, "-");
  if (cell.empty() || cell.back() != '%') return NAN;
  cell.pop_back();
  char* end = nullptr;
  const double v = std::strtod(cell.c_str(), &end);
  return end != nullptr && *end == '\0' && !cell.empty() ? v : NAN;
}

// docs/ACCURACY.md, line by line (empty when it cannot be read).
std::vector<std::string> accuracy_doc() {
  std::ifstream in(std::string(MESHSCOPE_SOURCE_DIR) + "/docs/ACCURACY.md");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> table_cells(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream in(line.substr(1));
  for (std::string c; std::getline(in, c, '|');) {
    const size_t b = c.find_first_not_of(' '), e = c.find_last_not_of(' ');
    cells.push_back(b == std::string::npos ? "" : c.substr(b, e - b + 1));
  }
  return cells;
}

// The lines of docs/ACCURACY.md's summary tables with `cells` cells whose first is "development"
// or "held back", split into cells (the headline has 5, the constant-MFU table 6).
std::vector<std::vector<std::string>> summary_lines(size_t cells) {
  std::vector<std::vector<std::string>> out;
  for (const std::string& line : accuracy_doc()) {
    if (line.rfind("| ", 0) != 0) continue;
    std::vector<std::string> c = table_cells(line);
    if (c.size() == cells && (c[0] == "development" || c[0] == "held back"))
      out.push_back(std::move(c));
  }
  return out;
}

// docs/ACCURACY.md's tables of the development and held-back rows say what the rows give now: each
// row once, its "error now" to the printed tenth of a point, and for a held-back row whether it
// falls inside its range (and its residual when it does not). A model change that moves a row
// fails here until the tables are brought up to date.
TEST(PredictPublished, AccuracyDocsRowTablesSayWhatTheRowsGiveNow) {
  const std::vector<std::string> doc = accuracy_doc();
  ASSERT_FALSE(doc.empty()) << "docs/ACCURACY.md";
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < rows().size(); ++i) {
    std::string name = rows()[i].file;
    index[name.substr(0, name.size() - std::string(".json").size())] = i;
  }
  std::map<size_t, int> seen;
  for (size_t n = 0; n < doc.size(); ++n) {
    const std::string& line = doc[n];
    if (line.rfind("| ", 0) != 0) continue;
    std::vector<std::string> cells = table_cells(line);
    std::string name = cells.empty() ? "" : cells[0];
    if (name.rfind("*set ", 0) == 0) name = name.substr(name.find(":* ") + 3);
    const auto it = index.find(name);
    if (it == index.end() || cells.size() < 3) continue;
    const size_t i = it->second;
    ++seen[i];
    const Result& res = results()[i];
    const bool held = rows()[i].held_back();
    const std::string where = "docs/ACCURACY.md:" + std::to_string(n + 1) + " " + name;
    const double error = doc_percent(cells[cells.size() - (held ? 2 : 1)]);
    EXPECT_NEAR(error, 100 * res.error, 0.051) << where;
    if (!held) continue;
    const std::string verdict = cells.back();
    EXPECT_EQ(verdict.rfind(inside_range(res) ? "yes" : "no (residual ", 0), 0u)
        << where << ": " << verdict;
    if (!inside_range(res)) {
      const std::string residual = verdict.substr(std::string("no (residual ").size());
      EXPECT_NEAR(doc_percent(residual.substr(0, residual.find(')'))), 100 * residual_of(res),
                  0.051)
          << where;
    }
  }
  for (size_t i = 0; i < rows().size(); ++i)
    EXPECT_EQ(seen[i], 1) << rows()[i].file << ": rows in docs/ACCURACY.md's tables";
}

// docs/ACCURACY.md's headline table ("Where it stands") is what the rows give now: the count,
// mean |error| (to the printed hundredth), rows beyond +-10% of each kind, and the held-back rows
// inside their range.
TEST(PredictPublished, AccuracyDocsHeadlineIsTheTestsOwn) {
  int count[2] = {}, beyond[2] = {}, inside = 0;
  double sum[2] = {};
  for (size_t i = 0; i < rows().size(); ++i) {
    const int k = rows()[i].held_back() ? 1 : 0;
    const double e = std::fabs(results()[i].error);
    ++count[k];
    sum[k] += e;
    beyond[k] += e > 0.10;
    if (k == 1) inside += inside_range(results()[i]);
  }
  const std::vector<std::vector<std::string>> lines = summary_lines(5);
  ASSERT_EQ(lines.size(), 2u) << "docs/ACCURACY.md: the headline table";
  for (const std::vector<std::string>& c : lines) {
    const int k = c[0] == "held back" ? 1 : 0;
    EXPECT_EQ(std::stoi(c[1]), count[k]) << c[0];
    EXPECT_NEAR(doc_percent(c[2]), 100 * sum[k] / count[k], 0.0051) << c[0];
    EXPECT_EQ(std::stoi(c[3]), beyond[k]) << c[0];
    if (k == 1) {
      EXPECT_EQ(std::stoi(c[4]), inside) << c[0];
    }
  }
}

// The simplest estimate beside the model (the yardstick issue 12 was filed with): every row's step
// at a constant share c of its GPU's dense peak, its model FLOPs counted as the summary counts
// them, against the peak the row's tables count MFU against (an FP8 row's: the FP8 peak; it had
// been the bf16 one, so its constant ran at half the share of its tables' peak). That step is the
// predicted one times mfu / c, so its error is (1 + error) * mfu / c - 1.
double constant_mfu_error(const Result& res, double c) {
  return (1 + res.error) * (res.summary.mfu / res.peak_over_summarys) / c - 1;
}
double mean_abs_constant_mfu_error(const std::vector<const Result*>& of, double c) {
  double sum = 0;
  for (const Result* res : of) sum += std::fabs(constant_mfu_error(*res, c));
  return sum / static_cast<double>(of.size());
}

// docs/ACCURACY.md's table of the model beside a constant MFU is what the rows give now: for the
// development and the held-back rows, the model's mean |error| beside that of 50% of peak and of
// the constant that does best on those very rows (a fit to them, on a grid of 0.1 point: no
// constant does better). The model must beat both on the rows it was not shaped on.
TEST(PredictPublished, AccuracyDocsSetsTheModelBesideAConstantMfu) {
  std::vector<const Result*> kind[2];
  double model[2] = {};
  for (size_t i = 0; i < rows().size(); ++i) {
    const int k = rows()[i].held_back() ? 1 : 0;
    kind[k].push_back(&results()[i]);
    model[k] += std::fabs(results()[i].error);
  }
  double half[2], best[2], best_c[2];
  for (int k = 0; k < 2; ++k) {
    model[k] /= static_cast<double>(kind[k].size());
    half[k] = mean_abs_constant_mfu_error(kind[k], 0.5);
    best[k] = INFINITY;
    for (int permille = 100; permille <= 900; ++permille) {
      const double e = mean_abs_constant_mfu_error(kind[k], permille / 1000.0);
      if (e < best[k]) best[k] = e, best_c[k] = permille / 1000.0;
    }
    std::printf("%s: model %.2f%%, constant 50%% MFU %.2f%%, best constant %.1f%% MFU %.2f%%\n",
                k ? "held back" : "development", 100 * model[k], 100 * half[k], 100 * best_c[k],
                100 * best[k]);
  }
  for (int set = 1; set <= kHeldBackSets; ++set) {
    std::vector<const Result*> of;
    double sum = 0;
    for (size_t i = 0; i < rows().size(); ++i)
      if (rows()[i].held_set == set)
        of.push_back(&results()[i]), sum += std::fabs(results()[i].error);
    std::printf("held back, set %d: model %.2f%%, constant 50%% MFU %.2f%%\n", set,
                100 * sum / static_cast<double>(of.size()),
                100 * mean_abs_constant_mfu_error(of, 0.5));
  }
  EXPECT_LT(model[1], best[1]);
  const std::vector<std::vector<std::string>> lines = summary_lines(6);
  ASSERT_EQ(lines.size(), 2u) << "docs/ACCURACY.md: the constant-MFU table";
  for (const std::vector<std::string>& c : lines) {
    const int k = c[0] == "held back" ? 1 : 0;
    EXPECT_EQ(std::stoi(c[1]), static_cast<int>(kind[k].size())) << c[0];
    EXPECT_NEAR(doc_percent(c[2]), 100 * model[k], 0.0051) << c[0];
    EXPECT_NEAR(doc_percent(c[3]), 100 * half[k], 0.0051) << c[0];
    EXPECT_NEAR(doc_percent(c[4]), 100 * best[k], 0.0051) << c[0];
    EXPECT_NEAR(doc_percent(c[5]), 100 * best_c[k], 0.051) << c[0];
  }
}

// docs/ACCURACY.md's "Ranges" table is the profiles' residuals: each framework and hardware the
// profiles carry, once, with its rows, mean, low, high and longest sequence.
TEST(PredictPublished, AccuracyDocsRangesTableIsTheProfiles) {
  const std::vector<std::string> doc = accuracy_doc();
  ASSERT_FALSE(doc.empty()) << "docs/ACCURACY.md";
  bool in_section = false;
  std::set<std::string> seen;
  for (const std::string& line : doc) {
    if (line.rfind("### ", 0) == 0) in_section = line == "### Ranges";
    if (!in_section || line.rfind("| ", 0) != 0) continue;
    const std::vector<std::string> c = table_cells(line);
    if (c.size() != 7 || c[0] == "framework") continue;
    const cost::Framework f = cost::find_framework(c[0]);
    const auto it = f.residuals.find(c[1]);
    ASSERT_NE(it, f.residuals.end()) << line;
    const cost::Residuals& r = it->second;
    EXPECT_EQ(std::stoi(c[2]), r.rows) << line;
    EXPECT_NEAR(doc_percent(c[3]), 50 * (r.low + r.high), 0.051) << line;
    EXPECT_NEAR(doc_percent(c[4]), 100 * r.low, 0.051) << line;
    EXPECT_NEAR(doc_percent(c[5]), 100 * r.high, 0.051) << line;
    std::string seq = c[6];
    seq.erase(std::remove(seq.begin(), seq.end(), ','), seq.end());
    EXPECT_EQ(std::stoll(seq), r.max_seq) << line;
    EXPECT_TRUE(seen.insert(c[0] + " on " + c[1]).second) << line;
  }
  size_t carried = 0;
  for (const std::string& name : cost::list_frameworks())
    carried += cost::find_framework(name).residuals.size();
  EXPECT_EQ(seen.size(), carried);
}

TEST(PredictPublished, APredictionCarriesItsRangeAroundThePoint) {
  const Result& res = results().front();  // megatron-2022 on a100-80gb
  const Summary& s = res.summary;
  EXPECT_EQ(s.range_basis, "megatron-2022 on a100-80gb");
  EXPECT_EQ(s.range_rows, 4);
  // The range around the point is the profile's 80% prediction interval of published /
  // predicted - 1 for Megatron 2022 on the A100 (docs/ACCURACY.md, "Ranges").
  const cost::Residuals r = cost::find_framework("megatron-2022").residuals.at("a100-80gb");
  EXPECT_NEAR(s.step_time_s_low, s.step_time_s * (1 + r.low), 1e-9 * s.step_time_s);
  EXPECT_NEAR(s.step_time_s_high, s.step_time_s * (1 + r.high), 1e-9 * s.step_time_s);
  EXPECT_LT(s.step_time_s_low, s.step_time_s_high);
  // Throughput and MFU move inversely to the step time.
  EXPECT_NEAR(s.tokens_per_s_low * s.step_time_s_high, s.tokens_per_s * s.step_time_s,
              1e-6 * s.tokens_per_s);
  EXPECT_NEAR(s.mfu_high * s.step_time_s_low, s.mfu * s.step_time_s, 1e-9);
}

TEST(PredictPublished, TorchtitansMeasuredPeaksLieAboveTheTensorsTheModelCounts) {
  // torchtitan benchmarks/llama3_h100_202412_torchtitan.md, Tables 1 and 3, row "FSDP": Llama 3.1
  // 8B, local batch 2, seq 8192, selective op AC, FSDP2 on 8 and on 128 H100s; the caching
  // allocator's reserved peak, 82.4 and 67.0 GiB. The rule (docs/ACCURACY.md, "Measured peaks",
  // written before the first prediction): the model counts tensors, not the allocator's cache,
  // so each prediction falls below its figure; the two differ by the sharded states, and the
  // model's difference must lie within 10% of the published 15.4 GiB.
  // Items 48 and 49: FSDP2's root unit and last block are counted while the loss runs, which
  // stays the peak's moment here (its working set dwarfs what the first reduction holds).
  constexpr double kGiB = 1073741824.0;
  const auto peak_gib = [&](const std::string& file) {
    const std::string path = std::string(MESHSCOPE_SOURCE_DIR) + "/sim/predict/configs/" + file;
    const Summary s =
        simulate(parse_config(load_json_file(path), path), {.build_timeline = false}).summary;
    EXPECT_GT(s.memory.at(0).unsharded_bytes, 0) << file;
    EXPECT_FALSE(s.memory.at(0).peak_at_first_reduce) << file;
    return s.peak_memory_bytes / kGiB;
  };
  const double on8 = peak_gib("torchtitan-llama31-8b-memory-8xh100.json");
  const double on128 = peak_gib("torchtitan-llama31-8b-memory-128xh100.json");
  EXPECT_LT(on8, 82.4);
  EXPECT_LT(on128, 67.0);
  EXPECT_NEAR(on8 - on128, 82.4 - 67.0, 0.1 * (82.4 - 67.0));
  std::printf(
      "torchtitan Llama 3.1 8B, reserved peak against the model: 8 GPUs %.1f of 82.4 GiB (%.0f%% "
      "under), 128 GPUs %.1f of 67.0 GiB (%.0f%% under)\n",
      on8, 100 * (1 - on8 / 82.4), on128, 100 * (1 - on128 / 67.0));
}

TEST(PredictPublished, TheRunTorchtitanReportsOutOfMemoryIsPredictedNotToFit) {
  // torchtitan docs/performance.md, footnote 1 of the Llama 2 table: Llama 2 70B with selective op
  // checkpointing ran out of memory at local batch 2 on 64 A100 80GB, so the table reports local
  // batch 1, which ran (a held-back row above). A published statement about memory, not a figure:
  // the model must put the first above the device's memory and the second below it.
  const auto summary = [](const std::string& file) {
    const std::string path = std::string(MESHSCOPE_SOURCE_DIR) + "/sim/predict/configs/" + file;
    return simulate(parse_config(load_json_file(path), path), {.build_timeline = false}).summary;
  };
  const Summary oom = summary("torchtitan-llama2-70b-opsac-b2-oom-64xa100.json");
  const Summary ran = summary("torchtitan-llama2-70b-opsac-b1-64xa100.json");
  EXPECT_FALSE(oom.fits);
  EXPECT_GT(static_cast<double>(oom.peak_memory_bytes), oom.memory_capacity_bytes);
  EXPECT_TRUE(ran.fits);
  EXPECT_LT(static_cast<double>(ran.peak_memory_bytes), ran.memory_capacity_bytes);
  std::printf(
      "Llama 2 70B, op-selective AC, 64 A100 80GB: local batch 2 %.1f GiB (ran out of "
      "memory), local batch 1 %.1f GiB (ran), of %.1f GiB\n",
      oom.peak_memory_bytes / 1073741824.0, ran.peak_memory_bytes / 1073741824.0,
      oom.memory_capacity_bytes / 1073741824.0);
}

}  // namespace
}  // namespace meshscope::predict
