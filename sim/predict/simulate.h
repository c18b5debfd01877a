// One configuration in, one simulated training step out: the Timeline and the summary figures.
// The entry point of `meshscope simulate`/`predict` and of the GUI's what-if panel (thread-safe:
// it touches no shared state, so call it from a background thread freely).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/cost/calibration.h"
#include "sim/predict/breakdown.h"
#include "sim/predict/config.h"
#include "sim/predict/memory.h"
#include "sim/schedule/schedule.h"
#include "traces/timeline.h"

namespace meshscope::predict {

struct Summary {
  std::string model;      // WorkloadCosts::description
  std::string hardware;   // catalog name
  std::string framework;  // framework profile name
  std::string schedule;   // family name
  std::string mesh;       // "dp=16 pp=1 tp=1 cp=1"
  int64_t gpus = 0;
  int microbatches = 0;
  double step_time_s = 0;
  double tokens_per_s = 0;  // samples x tokens per sample (seq) per second
  double samples_per_s = 0;
  double tflops_per_gpu = 0;  // model FLOPs (no recomputation) per second per GPU, in TFLOP/s
  double mfu = 0;             // tflops_per_gpu over the peak at the configured precision
  // Overall idle over the step window, as traces::analyze counts it (communication busy), at every
  // size: from the Timeline when one is built, else from each simulated rank's busy time.
  double bubble_fraction = 0;
  // Where a published run would fall around such a prediction, an 80% prediction interval from the
  // development set (cost::Residuals of the framework on this hardware; see range_basis): step
  // time x (1 + low .. 1 + high), throughput and MFU inversely. Equal to the point when no
  // residuals are known, and with a calibration (whose fitted rates they do not describe).
  double step_time_s_low = 0, step_time_s_high = 0;
  double tokens_per_s_low = 0, tokens_per_s_high = 0;
  double mfu_low = 0, mfu_high = 0;
  int range_rows = 0;       // development-set runs behind the range
  std::string range_basis;  // "torchtitan on a100-80gb", "megatron-core-2024 on h100-sxm" (its runs
                            // on other hardware), ...
  // The longest sequence of those runs (0: not stated), and whether this config's is longer: its
  // range is then an extrapolation (held-back runs at longer sequences fell outside theirs).
  int64_t range_max_seq = 0;
  bool range_beyond_seq = false;
  // The config runs FP8 (options.fp8) and every run behind its range ran BF16: its range is the
  // BF16 runs' (NVIDIA's FP8 runs are held back: docs/ACCURACY.md item 50, set 9).
  bool range_without_fp8 = false;
  // The share of the catalog's sustained rate the run computes at: that of the slowest of its
  // `gpus` GPUs (cost::slowest_gpu_share; 1 for an entry without a sustained_spread).
  double slowest_gpu_share = 1;
  double sustained_spread = 0;  // the catalog entry's, behind it
  double communication_s = 0;   // most communication time of any device
  int64_t peak_memory_bytes = 0;
  double memory_capacity_bytes = 0;
  bool fits = true;
  std::vector<DeviceMemory> memory;  // per pp coordinate (replicas are alike)
  // What `memory` counts a parameter: bytes of weights, gradients and optimizer state (the
  // profile's and the config's, docs/ACCURACY.md items 42, 45, 47), and over how many devices
  // each is sharded (ZeRO's stage over dp x cp; 1: whole).
  StateBytesPerParam state_bytes;
  int parameter_shards = 1;
  int gradient_shards = 1;
  int optimizer_shards = 1;
  // Where the step's time goes on the device with the busiest compute stream.
  Breakdown breakdown;
  // How the simulation ran.
  bool replicas_simulated_once = false;
  int64_t simulated_ranks = 0;
  int64_t simulated_actions = 0;
  double simulator_seconds = 0;
};

nlohmann::json to_json(const Summary& s);

struct SimulateOptions {
  bool build_timeline = true;
  bool expand_replicas = false;  // with symmetric replicas: copy their spans to every device
  // Fitted rates (`meshscope calibrate`); its hardware must be the config's cluster.gpu.
  const cost::Calibration* calibration = nullptr;
  // Run this schedule (a file written by hand or by `run --dump-schedule`) instead of generating
  // one; the validator must accept it, its mesh and stage count must match the config's. Costs
  // still come from the config; ZeRO's collectives are not written into it.
  const schedule::Schedule* schedule = nullptr;
  // Skip the event loop when the configuration cannot fit the device: its memory is known from
  // the schedule alone (each rank holds activations in its program's order, whatever the timing).
  // The Summary of such a configuration has its memory figures and fits = false, and no step
  // time or throughput. For the search, which ranks only what fits.
  bool engine_only_if_fits = false;
  // Fill Summary::breakdown (pricing the busiest device's actions once more; the search, which
  // ranks many configurations by their step time alone, turns it off).
  bool breakdown = true;
  // Simulation::schedule holds every rank's programs even when the representatives alone were
  // simulated (`simulate --schedule-out`: a file the same config takes back with --schedule-file).
  bool full_schedule = false;
};

struct Simulation {
  Summary summary;
  traces::Timeline timeline;  // empty unless build_timeline
  // What ran: the representatives' programs alone (mesh dp 1, tp 1) when they stood for their
  // replicas, unless SimulateOptions::full_schedule.
  schedule::Schedule schedule;
};

// Throws std::invalid_argument (config does not fit: "mesh.tp: heads (24) must be divisible by
// 16"; a given schedule the validator rejects; a calibration of other hardware),
// std::runtime_error (unknown hardware) or engine::SimulationError.
Simulation simulate(const PredictConfig& config, const SimulateOptions& options = {});

}  // namespace meshscope::predict
