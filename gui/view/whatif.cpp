// What-if configuration text, the configuration of a measured run and the scaling sweep.
#include "gui/view/whatif.h"

#include <algorithm>
#include <exception>

#include "sim/schedule/families.h"
#include "traces/analysis.h"

namespace meshscope::gui {
std::string describe(const WhatIfConfig& c) {
  std::string out = c.schedule + " dp=" + std::to_string(c.dp) + " pp=" + std::to_string(c.pp) +
                    " tp=" + std::to_string(c.tp) + " m=" + std::to_string(c.microbatches);
  // The chunks a rank holds, for every family that splits its stage (interleaved, interleaved-zb,
  // looped-bfs: the panel's choice; zb-v and dualpipe-v: their fixed two); it had been said for
  // "interleaved" alone.
  if (const auto f = schedule::parse_family(c.schedule)) {
    const schedule::FamilyInfo& fi = schedule::info(*f);
    if (fi.max_virtual_stages != 1) {
      const int v =
          fi.min_virtual_stages == fi.max_virtual_stages ? fi.min_virtual_stages : c.virtual_stages;
      out += " v=" + std::to_string(v);
    }
  }
  if (c.micro_batch > 0) out += " mb=" + std::to_string(c.micro_batch);
  if (!c.hardware.empty()) out += " on " + c.hardware;
  if (!c.precision.empty()) out += " " + c.precision;
  return out;
}

std::string describe(const traces::WorkloadDescriptor& w) {
  if (w.kind == traces::ModelKind::kUnknown) return "";
  std::string out(traces::name(w.kind));
  for (const auto& [key, v] :
       {std::pair{"L", w.layers}, std::pair{"h", w.hidden}, std::pair{"heads", w.heads},
        std::pair{"seq", w.seq}, std::pair{"V", w.vocab}, std::pair{"image", w.image},
        std::pair{"batch", w.batch}}) {
    if (v > 0) out += std::string(" ") + key + "=" + std::to_string(v);
  }
  return out;
}

WhatIfConfig config_from_run(const traces::Timeline& t, WhatIfConfig c) {
  const traces::RunDescriptor& run = t.run;
  if (!run.family.empty()) c.schedule = run.family;
  if (run.microbatches > 0) c.microbatches = run.microbatches;
  if (run.mesh.known()) {
    c.dp = run.mesh.dp;
    c.pp = run.mesh.pp;
    c.tp = run.mesh.tp;
  }
  if (run.virtual_stages > 0) c.virtual_stages = run.virtual_stages;
  if (!run.hardware.empty()) c.hardware = run.hardware;
  if (run.source == traces::RunSource::kCpu) c.precision = "fp32";
  if (run.source == traces::RunSource::kSim && !run.sim_config.empty()) c.config = run.sim_config;
  if (run.workload.kind != traces::ModelKind::kUnknown) {
    c.workload = run.workload;
    const int64_t parts = int64_t{c.dp} * c.microbatches;
    if (run.workload.batch > 0 && run.workload.batch % parts == 0)
      c.micro_batch = run.workload.batch / parts;
  }
  return c;
}

std::vector<int> scaling_values(ScalingAxis axis, const WhatIfConfig& c) {
  int limit = 64, own = c.microbatches;
  if (axis == ScalingAxis::kPipeline) {
    limit = 16;
    own = c.pp;
  } else if (axis == ScalingAxis::kDataParallel) {
    limit = 16;
    own = c.dp;
  }
  std::vector<int> xs;
  for (int x = 1; x <= limit; x *= 2) xs.push_back(x);
  if (std::find(xs.begin(), xs.end(), own) == xs.end()) xs.push_back(own);
  std::sort(xs.begin(), xs.end());
  return xs;
}

WhatIfConfig with_value(WhatIfConfig c, ScalingAxis axis, int value) {
  switch (axis) {
    case ScalingAxis::kMicrobatches:
      c.microbatches = value;
      break;
    case ScalingAxis::kPipeline:
      c.pp = value;
      break;
    default:
      c.dp = value;
      break;
  }
  return c;
}

ReplayTable replay_table(const Predictor& p, const WhatIfConfig& as_run, int64_t measured_ns) {
  const auto row = [&](const WhatIfConfig& c) {
    ReplayRow r;
    r.schedule = c.schedule;
    try {
      r.step_ns = traces::analyze(p.simulate(c)).step_time_ns;
      if (measured_ns > 0) {
        r.error_percent =
            100.0 * static_cast<double>(r.step_ns - measured_ns) / static_cast<double>(measured_ns);
      }
    } catch (const std::exception& e) {
      r.error = e.what();
    }
    return r;
  };
  ReplayTable t;
  t.measured_ns = measured_ns;
  t.as_run = row(as_run);
  for (const std::string& s : p.schedules) {
    if (s == as_run.schedule) continue;
    // Families that do not pipeline (naive, tp, dp) are no alternative to a pipeline.
    const auto f = schedule::parse_family(s);
    if (as_run.pp > 1 && f && (schedule::info(*f).pp_one_only || *f == schedule::Family::kNaive))
      continue;
    WhatIfConfig c = as_run;
    c.schedule = s;
    // Each alternative at its family's own chunks per rank, as `predict` takes them: the run's
    // one chunk made interleaved-zb zb-h1 and looped-bfs gpipe, rows that repeated theirs.
    if (f) c.virtual_stages = schedule::info(*f).default_virtual_stages;
    t.alternatives.push_back(row(c));
  }
  return t;
}

WhatIfStart start_whatif(const Predictor& p, const traces::Timeline& measured,
                         const WhatIfConfig& defaults) {
  WhatIfStart out;
  out.config = config_from_run(measured, defaults);
  // A profiler trace of a GPU the catalog describes starts on that GPU's entry, not the default.
  std::string board_note;
  if (const std::string& gpu = measured.run.gpu;
      measured.run.hardware.empty() && p.hardware_of_board && !gpu.empty()) {
    if (const std::string entry = p.hardware_of_board(gpu); !entry.empty()) {
      out.config.hardware = entry;
      board_note = "on " + entry + ", the catalog entry of the trace's GPU (" + gpu + ")";
    }
  }
  out.schedule_known = !measured.run.family.empty();
  // A job the predictor replays from its own traces is calibrated by them: its measured
  // per-action costs, not a fit of the op model.
  if (p.replay_measured) {
    try {
      out.table = p.replay_measured(measured);
    } catch (const std::exception& e) {
      out.calibration = std::string("not replayed from the trace: ") + e.what();
    }
    if (out.table) {
      out.calibration = out.table->calibrated_from;
      out.schedule_known = true;
      out.calibrated = true;
      // The panel starts as the job ran: its family, on one pipeline of it.
      if (!out.table->family.empty()) {
        out.config.schedule = out.table->family;
        out.config.pp = out.table->pp;
        out.config.virtual_stages = out.table->virtual_stages;
        out.config.microbatches = out.table->microbatches;
        out.config.dp = out.config.tp = 1;
      }
      return out;
    }
  }
  if (p.calibrate) {
    try {
      const std::string from = p.calibrate(measured);
      out.calibration = out.calibration.empty() ? from : out.calibration + "; " + from;
      out.calibrated = true;
    } catch (const std::exception& e) {
      out.calibration =
          out.calibration.empty() ? e.what() : out.calibration + "; " + std::string(e.what());
    }
  }
  if (!board_note.empty())
    out.calibration = out.calibration.empty() ? board_note : out.calibration + "; " + board_note;
  if (!out.schedule_known) {
    const std::string none =
        "the trace does not say which schedule ran: the prediction is the panel's "
        "configuration, not a replay of the run";
    out.calibration = out.calibration.empty() ? none : out.calibration + "; " + none;
  }
  return out;
}

std::vector<ScalingPoint> sweep(const Predictor& p, const WhatIfConfig& c, ScalingAxis axis) {
  std::vector<ScalingPoint> points;
  double base = 0;
  for (int x : scaling_values(axis, c)) {
    ScalingPoint pt;
    pt.x = x;
    const WhatIfConfig cx = with_value(c, axis, x);
    try {
      const traces::Timeline t = p.simulate(cx);
      const traces::TimelineAnalysis a = traces::analyze(t);
      pt.step_ns = a.step_time_ns;
      pt.bubble_fraction = a.bubble_fraction;
      if (pt.step_ns > 0) {
        const double rate =
            static_cast<double>(cx.microbatches) * cx.dp / static_cast<double>(pt.step_ns);
        if (base == 0) base = rate;
        pt.throughput = rate / base;
      }
    } catch (const std::exception& e) {
      pt.error = e.what();
    }
    points.push_back(std::move(pt));
  }
  return points;
}

}  // namespace meshscope::gui
