// Parameters fitted from profiled Timelines (`meshscope calibrate`) that replace catalog figures:
// achieved FLOP rate and fixed overhead per compute phase, alpha/beta of transfers and collectives.
#pragma once

#include <array>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "traces/timeline.h"

namespace meshscope::cost {

// The highest fitted rate a calibration may hold, as a multiple of the hardware's peak: no device
// computes above its peak, and twice it (assumption: room for a catalog peak that is not this
// machine's) is no measurement but FLOPs or times that are wrong. calibrate refuses to write a
// rate past it; predict and simulate refuse to read one.
inline constexpr double kMaxRateOverPeak = 2;

// duration_ns = overhead_ns + flops / flops_per_s, for one compute span of a phase.
struct PhaseFit {
  double flops_per_s = 0;  // 0: not calibrated, use the catalog model
  double overhead_ns = 0;
  double efficiency = 0;  // flops_per_s over the hardware's peak at the fitted precision
  int samples = 0;
  double rms_error = 0;  // relative, over the fitted spans
  // When > 0 (fitted against the workload the trace ran): duration = overhead_ns + model_scale x
  // the op model's time for the span's ops, so GEMM shape effects carry over to other configs.
  double model_scale = 0;
  // Whether the phase was fitted at all (a rate, or a scale of the op model).
  bool fitted() const { return flops_per_s > 0 || model_scale > 0; }
};

// duration_ns = alpha_ns + bytes / bandwidth_bytes_per_s (for collectives: bus bytes, i.e. the
// payload times NCCL's bus factor 2(n-1)/n or (n-1)/n).
struct LinkFit {
  double alpha_ns = 0;
  double bandwidth_bytes_per_s = 0;  // 0: not calibrated
  int samples = 0;
  double rms_error = 0;
  // Collectives: the smallest and largest group they ran in (0: not recorded, or a p2p fit). The
  // fit replaces the catalog's model for groups of any size and on any link: these say what it
  // saw.
  int min_ranks = 0, max_ranks = 0;
  // Imported collectives timed without the rest of their group (one rank's file), or imported
  // receives without their send: an NCCL kernel's time includes its wait for the group's last
  // member (the sender), so each is an upper bound.
  int timed_alone = 0;
};

struct Calibration {
  std::string hardware;  // catalog entry the fit refers to ("cpu-local")
  // The number format the traces computed in ("fp32"): model_scale scales the op model at that
  // format's peak. Empty: not recorded (files written before it), not checked.
  std::string precision;
  std::vector<std::string> traces;  // files it was fitted from
  // What each was, for a reader of the file ("run.json: meshscope run on cpu (2 threads), mlp
  // layers=8 hidden=512 batch=64, 1f1b on dp=1 pp=2 tp=1, 8 microbatches, 4 steps, 2 devices, 2
  // cores"), and when the fit was made (UTC, ISO 8601). Not read by predict.
  std::vector<std::string> fitted_on;
  std::string created;
  std::array<PhaseFit, static_cast<size_t>(traces::Phase::kCount)> phases{};
  LinkFit p2p;
  LinkFit collective;  // all-reduce, all-gather, reduce-scatter
  // Fitted on its own: an all-to-all's grouped sends to every peer (expert parallelism's token
  // exchange) run at another rate than a ring. When not fitted, `collective` applies to it.
  LinkFit all_to_all;

  const PhaseFit& phase(traces::Phase p) const { return phases[static_cast<size_t>(p)]; }
};

// JSON round trip; load throws std::runtime_error naming the file and key on bad input.
std::string to_json(const Calibration& c);
Calibration load_calibration(const std::string& path);
// The same from a parsed file; `path` starts every error message.
Calibration parse_calibration(const nlohmann::json& j, const std::string& path);
// Written whole or not at all (temp file + rename).
// Throws std::runtime_error for a fit the reader would refuse (a figure past its bounds): a fit of
// traces whose times were a million times too long had written a model_scale of 1.36e6, which
// every predict --calibration then refused.
void check_calibration(const Calibration& c);
// check_calibration, then the file; nothing written for a fit it refuses.
void save_calibration(const Calibration& c, const std::string& path);

}  // namespace meshscope::cost
