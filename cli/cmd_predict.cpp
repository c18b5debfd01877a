// `meshscope predict --config FILE.json [--json] [--csv F] [--plot F.svg]` and
// `meshscope predict --search --gpus N --config FILE.json`: simulated step time, throughput,
// MFU, bubbles and memory of one configuration, a sweep, or the best mesh for a GPU budget.
// Here the options and the flow; the table's text is cli/predict_table.cpp, the CSV and the chart
// sim/predict/sweep_output.cpp.
#include <CLI/CLI.hpp>

#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/json_text.h"
#include "cli/output_path.h"
#include "cli/predict_from_trace.h"
#include "cli/predict_notes.h"
#include "cli/predict_sensitivity.h"
#include "cli/predict_table.h"
#include "cli/sim_options.h"
#include "sim/predict/config.h"
#include "sim/predict/fit_alternatives.h"
#include "sim/predict/plot.h"
#include "sim/predict/search.h"
#include "sim/predict/simulate.h"
#include "sim/predict/sweep_output.h"
#include "sim/schedule/families.h"
#include "traces/atomic_file.h"

namespace meshscope::cli {
namespace {

struct PredictArgs {
  SimInputArgs input;
  bool json = false;
  std::string csv;
  std::string plot;
  bool search = false;
  bool breakdown = false;
  bool sensitivity = false;
  double sensitivity_percent = 10;
  int64_t gpus = 0;
  int top = 10;
  PredictFromTraceArgs trace;  // --from-trace: replay a torch pipelining job
};

// Point i of n done: on a terminal a bar redrawn in place; elsewhere (a log, CI) a plain line at
// each quarter, so redirected output does not fill with carriage returns.
void progress(size_t i, size_t n) {
  if (n <= 1 || i == 0) return;
  if (::isatty(::fileno(stderr))) {
    const int width = 30;
    const int done = static_cast<int>(width * i / n);
    std::fprintf(stderr, "\r[%s%s] %zu/%zu", std::string(done, '#').c_str(),
                 std::string(width - done, ' ').c_str(), i, n);
    if (i == n) std::fprintf(stderr, "\n");
  } else if (i * 4 / n != (i - 1) * 4 / n) {
    std::fprintf(stderr, "predict: %zu of %zu points done\n", i, n);
  }
  std::fflush(stderr);
}

void write_file(const std::string& path, const std::string& text) {
  traces::AtomicFile f(path);
  f.write(text);
  f.commit();
}

void run_search(const PredictArgs& a, const predict::PredictConfig& base,
                const cost::Calibration* cal) {
  predict::SearchOptions so;
  so.gpus = a.gpus;
  so.calibration = cal;
  predict::SearchReport report;
  const auto found = predict::search(base, so, progress, &report);
  if (found.empty())
    throw UserError(a.input.config + ": " + predict::why_nothing_fits(base, so, report));
  if (a.json) {
    nlohmann::json out = nlohmann::json::array();
    for (size_t i = 0; i < found.size() && static_cast<int>(i) < a.top; ++i) {
      nlohmann::json j = predict::to_json(found[i].summary);
      j["candidate"] = found[i].label;
      out.push_back(j);
    }
    std::printf("%s\n", json_text(out).c_str());
  }
  std::vector<predict::SweepRow> rows;
  for (size_t i = 0; i < found.size() && static_cast<int>(i) < a.top; ++i)
    rows.push_back(
        predict::SweepRow{{{"candidate", found[i].label}}, found[i].summary, "", std::nullopt});
  if (a.csv == "-") {
    std::fputs(predict::csv_of(rows).c_str(), stdout);
  } else if (!a.csv.empty()) {
    write_file(a.csv, predict::csv_of(rows));
  }
  if (a.json || a.csv == "-") return;
  std::printf("fastest configurations of %lld GPUs that fit (%zu fit):\n",
              static_cast<long long>(a.gpus), found.size());
  print_table(rows);
  std::vector<const predict::PredictConfig*> configs;
  for (size_t i = 0; i < found.size() && static_cast<int>(i) < a.top; ++i)
    configs.push_back(&found[i].config);
  std::fputs(uneven_layer_splits(configs).c_str(), stdout);
  // The base's tp_comm_overlap is off where a candidate has no tp: say so, since the config with
  // that mesh alone is refused until it is turned off too.
  bool dropped = false;
  for (size_t i = 0; i < found.size() && static_cast<int>(i) < a.top; ++i)
    dropped = dropped || (base.tp_comm_overlap && !found[i].config.tp_comm_overlap);
  if (dropped) {
    std::printf(
        "rows with tp=1 run without tp_comm_overlap (it needs tp > 1): set "
        "options.tp_comm_overlap false to predict one of them alone\n");
  }
}

// One configuration simulated as it is and once per figure of its catalog entry moved down and
// up (sim/predict/sensitivity.h).
void run_sensitivity(const PredictArgs& a, const std::vector<predict::SweepPoint>& points,
                     const cost::Calibration* cal) {
  const std::string& where = a.input.config;
  if (!std::isfinite(a.sensitivity_percent))  // refused with the command line; kept for callers
    throw usage_error("--sensitivity-percent: not a number");
  if (points.size() != 1)
    throw UserError(where + ": --sensitivity takes one configuration, not a sweep (" +
                    std::to_string(points.size()) + " points)");
  if (!points.front().error.empty()) throw UserError(where + ": " + points.front().error);
  if (cal != nullptr)
    throw usage_error(
        "--sensitivity moves the catalog's figures, which a calibration's fitted rates replace: "
        "leave --calibration out");
  predict::Sensitivity s;
  try {
    s = predict::sensitivity(points.front().config, a.sensitivity_percent / 100, {}, progress);
  } catch (const std::exception& e) {
    throw UserError(where + ": " + e.what());
  }
  if (a.json) {
    std::printf("%s\n", json_text(predict::to_json(s)).c_str());
    return;
  }
  std::printf("%s", format_sensitivity(s).c_str());
}

void run(const PredictArgs& a) {
  // The chart is SVG whatever the name: a name of another image format would be misread.
  for (const char* raster : {".png", ".jpg", ".jpeg", ".gif", ".webp", ".pdf"}) {
    if (std::filesystem::path(a.plot).extension() == raster)
      throw usage_error("--plot '" + a.plot + "': the chart is written as SVG; name it .svg");
  }
  require_distinct_outputs({{"--csv", &a.csv}, {"--plot", &a.plot}},
                           {{"--config", a.input.config},
                            {"--calibration", a.input.calibration},
                            {"--from-trace", a.trace.trace}});
  if (a.csv == "-" && (a.json || a.breakdown))
    throw usage_error(
        "--csv - prints the rows as CSV in place of the table: leave out --json and "
        "--breakdown, or give --csv a file");
  if (a.breakdown && (a.search || !a.trace.trace.empty()))
    throw usage_error("--breakdown goes with --config alone, not with --search or --from-trace");
  if (a.sensitivity && (a.search || !a.trace.trace.empty()))
    throw usage_error("--sensitivity goes with --config alone, not with --search or --from-trace");
  if (a.sensitivity && (a.breakdown || !a.csv.empty() || !a.plot.empty()))
    throw usage_error(
        "--sensitivity prints its own table (--json for JSON), not the prediction's: leave out "
        "--breakdown, --csv and --plot");
  if (!a.trace.trace.empty()) {
    if (!a.csv.empty() || !a.plot.empty())
      throw usage_error(
          "--csv and --plot write a prediction's rows, not a replay's: with "
          "--from-trace, --json gives every figure");
    if (!a.input.calibration.empty())
      throw usage_error(
          "--calibration goes with --config: --from-trace replays the job with the costs "
          "measured in its own traces");
    PredictFromTraceArgs t = a.trace;
    t.json = a.json;
    run_predict_from_trace(t);
    return;
  }
  if (a.input.config.empty()) throw usage_error("predict needs --config FILE or --from-trace DIR");
  if (a.search && !a.plot.empty())
    throw usage_error(
        "--plot draws a sweep's throughput; --search ranks meshes (--csv writes them)");
  const SimInputs in = load_sim_inputs(a.input);
  const std::string& where = a.input.config;
  const std::vector<predict::SweepPoint> points = predict::expand_sweep(in.config, where);
  if (a.search) {
    if (a.gpus == 0) throw usage_error("--search needs --gpus N");
    if (points.size() != 1)
      throw UserError(where + ": --search takes one configuration, not a sweep (" +
                      std::to_string(points.size()) + " points)");
    run_search(a, predict::parse_config(in.config, where), in.calibration_or_null());
    return;
  }
  if (a.sensitivity) {
    run_sensitivity(a, points, in.calibration_or_null());
    return;
  }
  std::vector<predict::SweepRow> rows;
  predict::SimulateOptions so;
  so.build_timeline =
      false;  // figures only (simulate() still analyzes a small Timeline for bubbles)
  so.calibration = in.calibration_or_null();
  for (size_t i = 0; i < points.size(); ++i) {
    predict::SweepRow r;
    r.swept = points[i].swept;
    r.error = points[i].error;
    try {
      if (r.error.empty()) r.summary = predict::simulate(points[i].config, so).summary;
    } catch (const std::exception& e) {
      // One point that cannot be simulated is a row of the sweep, not the end of it.
      if (points.size() == 1) throw UserError(where + ": " + e.what());
      r.error = e.what();
    }
    // One configuration that does not fit: what would (a sweep's rows are not each searched).
    if (points.size() == 1 && r.error.empty() && !r.summary.fits) {
      if (r.summary.simulator_seconds > 1)  // up to 15 more simulations: say so before them
        std::fprintf(stderr,
                     "predict: it does not fit; simulating it with other recomputation and ZeRO "
                     "stages (%.0f s each)\n",
                     r.summary.simulator_seconds);
      r.fit = predict::fit_alternatives(points[i].config, so);
    }
    rows.push_back(std::move(r));
    progress(i + 1, points.size());
  }
  // Both written before either replaces its target: a failed plot leaves the old CSV too.
  std::vector<traces::AtomicFile> outputs;
  if (!a.csv.empty() && a.csv != "-") outputs.emplace_back(a.csv).write(predict::csv_of(rows));
  if (!a.plot.empty())
    outputs.emplace_back(a.plot).write(predict::render_svg(predict::chart_of(rows)));
  for (traces::AtomicFile& f : outputs) f.sync();
  for (traces::AtomicFile& f : outputs) f.commit();
  if (a.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const predict::SweepRow& r : rows) {
      nlohmann::json o =
          r.error.empty() ? predict::to_json(r.summary) : nlohmann::json{{"error", r.error}};
      for (const auto& [k, v] : r.swept) o["sweep"][k] = v;
      if (r.fit) o["would_fit"] = predict::to_json(*r.fit);
      out.push_back(o);
    }
    std::printf("%s\n", json_text(points.size() == 1 ? out.front() : out).c_str());
    return;
  }
  if (a.csv == "-") {
    std::fputs(predict::csv_of(rows).c_str(), stdout);
    return;
  }
  print_table(rows);
  std::vector<const predict::PredictConfig*> configs;
  for (const predict::SweepPoint& p : points)
    if (p.error.empty()) configs.push_back(&p.config);
  std::fputs(uneven_layer_splits(configs).c_str(), stdout);
  std::fputs(settings_that_do_little(configs).c_str(), stdout);
  std::fputs(schedules_the_framework_lacks(configs).c_str(), stdout);
  if (so.calibration != nullptr) {
    std::printf(
        "no range (a..b) with --calibration: the development set's errors are of predictions "
        "from the catalog's figures, which the calibration's fitted rates replace\n");
    const auto& phases = so.calibration->phases;
    if (std::none_of(phases.begin(), phases.end(),
                     [](const cost::PhaseFit& f) { return f.fitted(); }))
      std::printf(
          "the calibration fits no compute phase: compute is priced from the catalog's figures, "
          "and only its links from the calibration\n");
    std::fputs(collective_fit_beyond_its_groups(*so.calibration, configs).c_str(), stdout);
  }
  if (a.breakdown) print_breakdowns(rows);
}

// --schedule of --from-trace: a pipeline family the replay runs, by meshscope's name or torch's
// class name (Schedule1F1B, or 1F1B as torch's own fixture folders say); made meshscope's name.
CLI::Validator replay_family_check() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        std::string names;
        for (size_t i = 0; i < schedule::kFamilies.size(); ++i) {
          const schedule::FamilyInfo& f = schedule::kFamilies[i];
          if (f.pp_one_only || static_cast<schedule::Family>(i) == schedule::Family::kNaive)
            continue;
          const std::string torch(f.torch_class);
          if (v == f.name || (!torch.empty() && (v == torch || "Schedule" + v == torch))) {
            v = std::string(f.name);
            return "";
          }
          names += (names.empty() ? "" : ", ") + std::string(f.name);
        }
        return "'" + v + "' is not a pipeline family the replay runs (one of " + names +
               "; or torch's class name, as Schedule1F1B or 1F1B)";
      },
      "FAMILY");
}

}  // namespace

void add_predict_command(CLI::App& app) {
  auto args = std::make_shared<PredictArgs>();
  CLI::App* cmd = app.add_subcommand(
      "predict",
      "Predict step time, tokens/s, TFLOP/s per GPU, MFU, bubble fraction and memory of a "
      "configuration by simulation; lists in place of values sweep them; --search finds the "
      "fastest mesh that fits. Config keys: docs/CONFIG.md.");
  add_sim_input_options(*cmd, args->input, "configuration JSON (lists sweep)");
  cmd->add_flag(
      "--json", args->json,
      "print JSON (step_time_s, tokens_per_s, tflops_per_gpu, mfu, "
      "bubble_fraction, peak_memory_bytes, fits, ...; for one configuration that does not "
      "fit, would_fit: the recomputation and ZeRO stages that would; every key: docs/OUTPUT.md)");
  cmd->add_option("--csv", args->csv,
                  "also write the rows as CSV (with --search: the ranked meshes); - prints them "
                  "on stdout in place of the table")
      ->check(output_file_check(DashMeans::kStdout));
  cmd->add_option("--plot", args->plot, "also write an SVG chart of throughput over the sweep")
      ->check(output_file_check());
  cmd->add_flag("--breakdown", args->breakdown,
                "also print where the step's time goes on the busiest device: GEMMs, attention, "
                "norms, elementwise passes, recomputation, exposed tp collectives, the optimizer "
                "step, idle; the data-parallel collectives' time on the links and what the step "
                "pays for them (JSON: always, as \"breakdown\"); and what holds the fullest "
                "device's memory: parameters, gradients, optimizer state (each with its bytes a "
                "parameter and the devices it is sharded over), activations (JSON: "
                "\"memory_per_stage\", \"state_bytes_per_parameter\", \"state_shards\")");
  cmd->add_flag("--sensitivity", args->sensitivity,
                "instead of the table: the step time with each figure of the hardware catalog "
                "entry (GEMM and attention rates, memory and link bandwidths, latencies) and of "
                "the framework profile (elementwise passes, extra memory passes, loss bytes) "
                "moved down and up alone, the largest change first, with the source or "
                "assumption each figure rests on (JSON with --json)");
  cmd->add_option("--sensitivity-percent", args->sensitivity_percent,
                  "how far --sensitivity moves each figure, in percent of itself")
      ->capture_default_str()
      // CLI::Range said "not in range 1.000000 to 50.000000", and NaN passed it.
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            const double percent = std::strtod(v.c_str(), nullptr);
            return percent >= 1 && percent <= 50 ? "" : "a percent in [1, 50], got " + v;
          },
          "FLOAT in [1 - 50]"))
      ->needs("--sensitivity");
  cmd->add_flag("--search", args->search, "search dp x pp x tp, microbatch size and schedule");
  // An option of one mode given without it would be ignored, and the user would read the figures
  // of something else (a gpipe prediction that is the config's own schedule): refuse instead.
  cmd->add_option("--gpus", args->gpus, "GPU budget for --search")
      ->check(CLI::Range(int64_t{1}, predict::kMaxSearchGpus))
      ->needs("--search");
  cmd->add_option("--top", args->top, "rows --search prints")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20))
      ->needs("--search");
  // A measured torch pipelining job instead of a config (cli/predict_from_trace.cpp).
  cmd->get_option("--config")->required(false);
  cmd->add_option("--from-trace", args->trace.trace,
                  "replay a torch.distributed.pipelining job from its traces: the schedule that "
                  "ran (with its error against the measured step), then the alternatives")
      ->type_name("DIR")
      ->check(input_path_check())
      ->excludes("--config");
  cmd->add_option("--schedule", args->trace.schedule,
                  "with --from-trace: only this alternative family (meshscope's name, or torch's "
                  "class: Schedule1F1B or 1F1B)")
      ->transform(replay_family_check())
      ->needs("--from-trace");
  cmd->add_option("--microbatches", args->trace.microbatches,
                  "with --from-trace: microbatches of the alternatives (default: the run's)")
      ->check(CLI::Range(1, 1 << 20))
      ->needs("--from-trace");
  cmd->add_option("--pp", args->trace.pp,
                  "with --from-trace: pipeline ranks of the alternatives (default: the run's)")
      ->check(CLI::Range(1, 1 << 16))
      ->needs("--from-trace");
  cmd->callback([args] { run(*args); });
}

}  // namespace meshscope::cli
