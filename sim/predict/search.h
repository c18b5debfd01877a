// `predict --search`: every dp x pp x tp, microbatch size and schedule that uses exactly N GPUs,
// simulated, the ones that fit memory ranked by step time.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "sim/cost/calibration.h"
#include "sim/predict/config.h"
#include "sim/predict/simulate.h"

namespace meshscope::predict {

// As many GPUs as a prediction config may use (config.cpp).
inline constexpr int64_t kMaxSearchGpus = int64_t{1} << 24;

struct SearchOptions {
  int64_t gpus = 8;  // in [1, kMaxSearchGpus]; search_space throws std::invalid_argument otherwise
  std::vector<int> micro_batches = {1, 2, 4, 8};
  int max_tp = 0;  // 0: GPUs per node
  const cost::Calibration* calibration = nullptr;
  // Configurations whose memory (known from the schedule) exceeds the device are not run through
  // the engine (SimulateOptions::engine_only_if_fits); the result is the same either way.
  bool skip_engine_over_memory = true;
};

struct Candidate {
  PredictConfig config;
  Summary summary;
  std::string label;  // "dp=8 pp=4 tp=8 micro=1 1f1b"
};

// The configurations the search tries (model, batch, cluster and options come from `base`).
std::vector<PredictConfig> search_space(const PredictConfig& base, const SearchOptions& options);

// What became of the search space: so an empty result says why.
struct SearchReport {
  size_t candidates = 0;           // meshes x microbatch sizes x schedules tried
  size_t unsuitable = 0;           // the model cannot take them (heads over tp, ...)
  std::string first_unsuitable;    // the first one's reason
  size_t over_memory = 0;          // simulated but beyond the device's memory
  int64_t least_memory_bytes = 0;  // the smallest peak among those
  double memory_capacity_bytes = 0;
};

// Simulates every candidate (progress(i, n) after each) and returns those that fit, fastest first.
// Candidates the model cannot take (heads not divisible by tp, ...) are skipped.
std::vector<Candidate> search(const PredictConfig& base, const SearchOptions& options,
                              const std::function<void(size_t, size_t)>& progress = {},
                              SearchReport* report = nullptr);

// Why a search found nothing, in one line naming the key to change: no mesh of the GPU budget
// divides batch.global, none suits the model, or none fits memory.
std::string why_nothing_fits(const PredictConfig& base, const SearchOptions& options,
                             const SearchReport& report);

}  // namespace meshscope::predict
