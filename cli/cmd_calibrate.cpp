// `meshscope calibrate TRACE... -o calib.json [--hardware NAME]`: fit per-phase compute rates and
// link alpha/beta from profiled traces (an imported PyTorch profile: its NCCL collectives, the
// collective link), for `simulate`/`predict --calibration`.
// `meshscope calibrate --gemm-rates FILE --hardware NAME`: calibrate_gemm_rates.h.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/calibrate_gemm_rates.h"
#include "cli/commands.h"
#include "cli/number_text.h"
#include "cli/output_path.h"
#include "cli/rank_from_option.h"
#include "cli/read_progress.h"
#include "sim/cost/board.h"
#include "sim/cost/calibration.h"
#include "sim/cost/fit.h"
#include "sim/cost/hardware.h"
#include "sim/predict/calibrate_model.h"
#include "sim/predict/config.h"
#include "traces/import/load_trace.h"

namespace meshscope::cli {
namespace {

struct CalibrateArgs {
  std::vector<std::string> traces;
  std::string out;
  std::string hardware;  // empty: the entry of the traces' GPU (hardware_of_traces), else cpu-local
  std::string precision = "fp32";
  std::string rank_from;  // --rank-from
  GemmRatesArgs gemm;
};

// A CPU profile fitted as a GPU (or the reverse) gives rates of one device for another: refused.
// meshscope's runs say where they ran (Timeline::run); an imported Kineto trace names its
// process-group backend (distributedInfo.backend: RunDescriptor::process_group_backend; the ranks
// of a folder must name the same one, load_traces refuses others as ranks of different jobs):
// NCCL runs on GPUs, gloo (as torch's CPU pipelining jobs use) taken as a CPU run; any other name,
// or none, is not checked. A cpu run whose rank threads outnumbered its cores (RunDescriptor::
// cores; recorded since stop 58) is warned about: its spans include waiting for a core, so every
// rate fitted from them is too slow.
// " (give --hardware the entry of its GPU, the trace's "NVIDIA H800", which no entry describes: the
// catalog has a100-80gb, h100-sxm)": what to write instead of the cpu default, for a GPU trace.
std::string gpu_entries_hint(const traces::Timeline& t) {
  std::string gpus;
  for (const std::string& name : cost::list_hardware()) {
    try {
      if (cost::find_hardware(name).kind == "cpu") continue;
    } catch (const std::exception&) {
      continue;  // a broken entry is named when given, not here
    }
    gpus += (gpus.empty() ? "" : ", ") + name;
  }
  const std::string& gpu = t.run.gpu;
  return " (give --hardware the entry of its GPU" +
         (gpu.empty() ? std::string() : ", the trace's \"" + gpu + "\", which no entry describes") +
         (gpus.empty() ? std::string(")") : ": the catalog has " + gpus + ")");
}

// The catalog entry calibrate fits when --hardware is not given: the one that describes the GPU
// the traces recorded (cost::hardware_for_board) (RunDescriptor::gpu: a PyTorch profiler trace's
// deviceProperties, an Nsight export's TARGET_INFO_GPU), said on stderr; else cpu-local,
// meshscope's CPU runs' (a GPU trace of a board no entry lists is then refused by check_fits,
// naming the board). Traces of two boards are refused: their rates are no one device's.
std::string hardware_of_traces(const std::vector<traces::Timeline>& timelines,
                               const std::vector<std::string>& paths) {
  std::string board, board_path;
  const auto entry_of = [](const std::string& b) {
    const std::string e = cost::hardware_for_board(b);
    return e.empty() ? std::string("no catalog entry") : e;
  };
  for (size_t i = 0; i < timelines.size(); ++i) {
    const std::string& gpu = timelines[i].run.gpu;
    if (gpu.empty()) continue;
    if (!board.empty() && gpu != board)
      throw UserError(paths[i] + ": ran on " + gpu + " (" + entry_of(gpu) + "), " + board_path +
                      " on " + board + " (" + entry_of(board) +
                      "): calibrate each board apart, or name one with --hardware");
    board = gpu;
    board_path = paths[i];
  }
  const std::string entry = board.empty() ? std::string() : cost::hardware_for_board(board);
  if (entry.empty()) return "cpu-local";
  std::fprintf(stderr,
               "meshscope: calibrate: --hardware %s, the catalog entry of the traces' GPU \"%s\"\n",
               entry.c_str(), board.c_str());
  return entry;
}

void check_fits(const std::string& p, const traces::Timeline& t, const cost::Hardware& hw) {
  const traces::RunSource source = t.run.source;
  // The simulator's own output (simulate --out, a cpu-time replay) holds the rates it was given:
  // a fit of it measures nothing, and beside measured traces it would pull their fit toward them.
  if (source == traces::RunSource::kSim || source == traces::RunSource::kSynthetic) {
    const auto how = t.metadata.find("source");
    throw UserError(p + ": a trace the simulator wrote (" +
                    (how != t.metadata.end() && how->second == "replay"
                         ? std::string("a cpu-time replay")
                         : std::string(traces::name(source))) +
                    "), not a measured one: calibrate fits the spans of a run (meshscope run, a "
                    "PyTorch profiler or Nsight Systems trace)");
  }
  std::optional<bool> cpu_trace;
  std::string where(traces::name(source));
  if (source == traces::RunSource::kCpu || source == traces::RunSource::kCuda ||
      source == traces::RunSource::kCudaVirtual) {
    cpu_trace = source == traces::RunSource::kCpu;
  } else if (const std::string& pg = t.run.process_group_backend; pg == "nccl" || pg == "gloo") {
    cpu_trace = pg == "gloo";
    where = pg;
  }
  if (cpu_trace && *cpu_trace != (hw.kind == "cpu"))
    throw UserError(p + ": ran on the " + where + " backend, but --hardware " + hw.name + " is a " +
                    hw.kind + (*cpu_trace ? " (use --hardware cpu-local)" : gpu_entries_hint(t)));
  const auto cores = static_cast<size_t>(std::max(0, t.run.cores));
  if (source == traces::RunSource::kCpu && cores > 0 && t.devices.size() > cores)
    std::fprintf(stderr,
                 "meshscope: warning: %s: its %zu ranks shared %zu core(s), so its spans include "
                 "waiting for a core, unless its threads ran unpreempted (a real-time policy, "
                 "chrt -f), and the rates fitted from them are then too slow; calibrate on a run "
                 "with a core per rank\n",
                 p.c_str(), t.devices.size(), cores);
}

// What a trace was, as the calibration file records it (Calibration::fitted_on): "run.json:
// meshscope run on cpu (2 threads), mlp layers=8 hidden=512 batch=64, 1f1b on dp=1 pp=2 tp=1, 8
// microbatches, 4 steps, 2 devices, 2 cores"; an imported profile by its source, steps and GPU.
std::string fitted_on(const std::string& path, const traces::Timeline& t) {
  const traces::RunDescriptor& r = t.run;
  const bool own = r.source == traces::RunSource::kCpu || r.source == traces::RunSource::kCuda ||
                   r.source == traces::RunSource::kCudaVirtual;
  const std::string source(traces::name(r.source));
  std::string out =
      path + ": " +
      (own ? "meshscope run on " + (r.backend.empty() ? source : r.backend) : source + " trace");
  const traces::WorkloadDescriptor& w = r.workload;
  if (w.kind != traces::ModelKind::kUnknown) {
    out += ", " + std::string(traces::name(w.kind));
    for (const auto& [key, value] :
         {std::pair{"layers", w.layers}, std::pair{"hidden", w.hidden}, std::pair{"heads", w.heads},
          std::pair{"seq", w.seq}, std::pair{"batch", w.batch}, std::pair{"experts", w.experts},
          std::pair{"top_k", w.top_k}, std::pair{"ep", w.ep}})
      if (value > 0) out += " " + std::string(key) + "=" + std::to_string(value);
  }
  if (!r.schedule.empty()) out += ", " + r.schedule;
  if (r.mesh.known())
    out += (r.schedule.empty() ? ", " : " on ") + std::string("dp=") + std::to_string(r.mesh.dp) +
           " pp=" + std::to_string(r.mesh.pp) + " tp=" + std::to_string(r.mesh.tp);
  if (r.microbatches > 0) out += ", " + std::to_string(r.microbatches) + " microbatches";
  out += ", " + std::to_string(t.steps.size()) + (t.steps.size() == 1 ? " step" : " steps");
  out += ", " + std::to_string(t.devices.size()) + (t.devices.size() == 1 ? " device" : " devices");
  if (r.cores > 0) out += ", " + std::to_string(r.cores) + " cores";
  if (!r.gpu.empty()) out += ", " + r.gpu;
  return out;
}

// Now as ISO 8601 UTC, to the second ("2026-12-07T16:40:05Z").
std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

void run(const CalibrateArgs& a) {
  ReadPaths inputs = {{"--gemm-rates", a.gemm.file},
                      {"--compare", a.gemm.compare},
                      {"--held-rates", a.gemm.held},
                      {"--hardware", a.hardware}};
  for (const std::string& t : a.traces) inputs.emplace_back("a profiled trace", t);
  require_distinct_outputs({{"--out", &a.out}, {"--write-hardware", &a.gemm.write_hardware}},
                           inputs);
  if (!a.gemm.file.empty()) {
    run_gemm_rates(a.gemm, a.hardware);
    return;
  }
  if (a.traces.empty()) throw usage_error("calibrate needs profiled traces (or --gemm-rates FILE)");
  if (a.out.empty()) throw usage_error("calibrate needs -o/--out FILE for the calibration");
  const auto precision = cost::parse_precision(a.precision);
  if (!precision)
    throw usage_error("--precision: '" + a.precision + "' is not bf16, fp16, fp32 or tf32");
  // The same trace twice (under one name or two, or as a file of a folder also given) would
  // count each of its samples twice.
  std::vector<std::pair<std::filesystem::path, std::string>> files;  // (file, as given)
  for (const std::string& t : a.traces) {
    std::error_code ec;
    if (std::filesystem::is_directory(t, ec)) {
      for (const std::filesystem::path& f : traces::trace_files_in(t)) files.emplace_back(f, t);
    } else {
      files.emplace_back(t, t);
    }
  }
  for (size_t i = 0; i < files.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      std::error_code ec;
      if (files[i].first == files[j].first ||
          std::filesystem::equivalent(files[i].first, files[j].first, ec)) {
        const std::string how = files[i].second == files[j].second
                                    ? ""
                                    : " (" + files[j].second + " and " + files[i].second + ")";
        throw UserError(files[i].first.string() + ": given twice" + how +
                        ": its samples would count twice in the fit");
      }
    }
  }
  std::vector<traces::Timeline> timelines;
  for (const std::string& p : a.traces) {
    // Each trace on its own (a folder is one run's per-rank files, as analyze and convert read
    // it), its warnings said before the next is read.
    const std::filesystem::path one[] = {p};
    traces::ImportReport report;
    traces::ImportOptions options = options_reporting_progress("calibrate");
    options.rank_from_file_order = a.rank_from == kRankFromFileOrder;
    timelines.push_back(traces::load_trace_paths(one, options, &report));
    // What the import skipped, as analyze says it: a fit without those spans, said.
    for (const std::string& line : report.lines(/*malformed_only=*/true))
      std::fprintf(stderr, "meshscope: warning: %s: %s\n", p.c_str(), line.c_str());
  }
  const cost::Hardware hw = cost::find_hardware(
      a.hardware.empty() ? hardware_of_traces(timelines, a.traces) : a.hardware);
  for (size_t i = 0; i < timelines.size(); ++i) {
    const std::string& p = a.traces[i];
    check_fits(p, timelines[i], hw);
    // meshscope's cpu backend computes in fp32: a calibration of another format would scale that
    // format's peak by fp32 rates, and a config of it would be predicted at them.
    if (timelines[i].run.source == traces::RunSource::kCpu &&
        *precision != cost::Precision::kFp32) {
      std::fprintf(stderr,
                   "meshscope: warning: %s: a cpu run computes in fp32, but --precision is %s: "
                   "the fit is of fp32 rates, written as %s's (give --precision fp32)\n",
                   p.c_str(), a.precision.c_str(), a.precision.c_str());
    }
  }
  std::vector<const traces::Timeline*> ptrs;
  for (const traces::Timeline& t : timelines) ptrs.push_back(&t);
  // Among several traces, one that holds nothing to fit adds no sample: named, since alone it
  // would have been refused ("nothing to fit") and beside the others it had gone unseen.
  if (timelines.size() > 1) {
    for (size_t i = 0; i < timelines.size(); ++i) {
      try {
        (void)cost::fit_calibration({&timelines[i]}, hw, *precision);
      } catch (const std::invalid_argument&) {
        std::fprintf(stderr,
                     "meshscope: warning: %s: nothing in it to fit (no compute span with FLOPs "
                     "and a phase, no received transfer with bytes, no collective of a known "
                     "group): it adds nothing to the calibration\n",
                     a.traces[i].c_str());
      }
    }
  }
  std::string traces_named;  // the traces, as a refusal names them
  for (const std::string& p : a.traces) traces_named += (traces_named.empty() ? "" : ", ") + p;
  int rebuilt = 0;
  cost::Calibration c;
  try {
    c = predict::calibrate_against_model(ptrs, hw, *precision, &rebuilt);
  } catch (const std::invalid_argument& e) {
    throw UserError(traces_named + ": " + e.what());
  }
  // A rate past cost::kMaxRateOverPeak is no measurement: args.flops of 1e300 were fitted as
  // 1.5e290 of the peak and written.
  for (size_t i = 0; i < c.phases.size(); ++i) {
    const cost::PhaseFit& f = c.phases[i];
    if (f.samples > 0 && f.efficiency > cost::kMaxRateOverPeak) {
      char rate[96];
      std::snprintf(rate, sizeof rate, "%.4g GFLOP/s, %.3g times the peak", f.flops_per_s / 1e9,
                    f.efficiency);
      throw UserError(traces_named + ": the " + std::string(traces::kPhaseNames[i]) +
                      " spans fit " + rate + " of " + hw.name +
                      " (--hardware): their FLOPs (args.flops) or times are wrong, or they ran "
                      "on other hardware; nothing written");
    }
  }
  c.traces = a.traces;
  for (size_t i = 0; i < timelines.size(); ++i)
    c.fitted_on.push_back(fitted_on(a.traces[i], timelines[i]));
  c.created = utc_now();
  try {
    cost::check_calibration(c);
  } catch (const std::runtime_error& e) {
    throw UserError(traces_named + ": " + e.what());
  }
  cost::save_calibration(c, a.out);
  std::printf(
      "calibration for %s from %zu trace(s), %d with a workload rebuilt for a fit against "
      "the op model:\n",
      hw.name.c_str(), a.traces.size(), rebuilt);
  for (size_t i = 0; i < c.phases.size(); ++i) {
    const cost::PhaseFit& f = c.phases[i];
    if (f.samples == 0) continue;
    if (f.flops_per_s > 0)
      std::printf("  %-12s %8.3f GFLOP/s (%.1f%% of peak)",
                  std::string(traces::kPhaseNames[i]).c_str(), f.flops_per_s / 1e9,
                  100 * f.efficiency);
    else
      std::printf("  %-12s (its spans carry no FLOPs: no rate)",
                  std::string(traces::kPhaseNames[i]).c_str());
    if (f.model_scale > 0) std::printf(", %.2f x the op model", f.model_scale);
    std::printf(" + %.1f us per span, %d spans, rms error %.1f%%\n", f.overhead_ns / 1e3, f.samples,
                100 * f.rms_error);
  }
  if (std::any_of(c.phases.begin(), c.phases.end(),
                  [](const cost::PhaseFit& f) { return f.samples > 0; }))
    std::printf(
        "  (where a phase has 'x the op model', predict prices it as that multiple of the op "
        "model's time plus the time per span, both of that fit, and GFLOP/s is its spans' FLOPs "
        "over their time; elsewhere GFLOP/s is the fitted marginal rate, the slope of span time "
        "against FLOPs, and the time per span its intercept)\n");
  auto link = [](const char* what, const cost::LinkFit& l) {
    if (l.samples == 0) {
      std::printf("  %-12s no spans with bytes\n", what);
      return;
    }
    std::string groups;
    if (l.max_ranks > 0) {
      groups = " of groups of " + std::to_string(l.min_ranks) +
               (l.max_ranks > l.min_ranks ? " to " + std::to_string(l.max_ranks) : "") + " ranks";
    }
    // fit_line draws the line through the origin where the bytes hardly vary (one payload size),
    // the slope is within twice its standard error, or the intercept came out negative or longer
    // than the shortest span: alpha is then not measured, 0 by construction.
    std::printf("  %-12s alpha %s, %.3f GB/s%s, %d spans%s, rms error %.1f%%\n", what,
                l.alpha_ns > 0 ? (format_number("%.1f", l.alpha_ns / 1e3) + " us").c_str()
                               : "not separable from the bandwidth (payloads of one size, a "
                                 "slope within twice its standard error, or an intercept below 0 "
                                 "or past the shortest span: fitted through the origin)",
                l.bandwidth_bytes_per_s / 1e9, l.max_ranks > 0 ? " bus bandwidth" : "", l.samples,
                groups.c_str(), 100 * l.rms_error);
  };
  const std::array<std::pair<const char*, const cost::LinkFit*>, 3> links = {
      {{"p2p", &c.p2p}, {"collective", &c.collective}, {"all_to_all", &c.all_to_all}}};
  for (const auto& [what, l] : links) link(what, *l);
  for (const auto& [what, l] : links) {
    if (l->timed_alone == 0) continue;
    const bool p2p = l == &c.p2p;
    std::fprintf(stderr,
                 "meshscope: warning: %d of the %d %s spans were timed without %s: an NCCL "
                 "kernel's time includes its wait for %s, so the fitted bandwidth is too low and "
                 "alpha too high; give a folder of every rank's trace, where each is timed from "
                 "%s\n",
                 l->timed_alone, l->samples, what, p2p ? "their send" : "the rest of their group",
                 p2p ? "the sender" : "the group's last rank",
                 p2p ? "its send's begin" : "the last rank's arrival");
  }
  if (c.collective.max_ranks > 0 || c.all_to_all.max_ranks > 0)
    std::printf(
        "  (predict and simulate --calibration price every collective with these fits, whatever "
        "its group's size and links: they were fitted on the groups above)\n");
  // A typical span off by more than its own time (assumption: past that the line predicts
  // nothing) scatters for a reason other than its FLOPs or bytes: a thread preempted on a shared
  // machine, a payload of one size whose few slow spans set the slope.
  std::string scattered;
  for (size_t i = 0; i < c.phases.size(); ++i)
    if (c.phases[i].samples > 0 && c.phases[i].rms_error > 1)
      scattered += (scattered.empty() ? "" : ", ") + std::string(traces::kPhaseNames[i]);
  for (const auto& [what, l] : links)
    if (l->samples > 0 && l->rms_error > 1)
      scattered += (scattered.empty() ? "" : ", ") + std::string(what);
  if (!scattered.empty())
    std::fprintf(
        stderr,
        "meshscope: warning: the %s fit's spans scatter by more than their own time "
        "(rms error above 100%%): their times vary for reasons other than their FLOPs or "
        "bytes (threads waiting for a core on a shared machine; for transfers and collectives, "
        "a payload of one size whose few slow spans set the line), so its figures predict "
        "little; calibrate on a quieter run (docs/ACCURACY.md section 3 runs under chrt)\n",
        scattered.c_str());
  // A line through two points fits them exactly: its rms error of 0 says nothing of the fit.
  std::string few;
  for (size_t i = 0; i < c.phases.size(); ++i)
    if (c.phases[i].samples > 0 && c.phases[i].samples < 3)
      few += (few.empty() ? "" : ", ") + std::string(traces::kPhaseNames[i]) + " (" +
             std::to_string(c.phases[i].samples) + ")";
  for (const auto& [what, l] : links)
    if (l->samples > 0 && l->samples < 3)
      few +=
          (few.empty() ? "" : ", ") + std::string(what) + " (" + std::to_string(l->samples) + ")";
  if (!few.empty())
    std::fprintf(stderr,
                 "meshscope: warning: fitted from fewer than 3 spans: %s; a line through so few "
                 "fits them whatever they are, so its rms error tells nothing; calibrate on a "
                 "run of more microbatches or steps\n",
                 few.c_str());
  // A run's first step warms caches and faults pages in: alone, it is all a fit sees.
  for (size_t i = 0; i < timelines.size(); ++i) {
    const traces::RunSource src = timelines[i].run.source;
    if ((src == traces::RunSource::kCpu || src == traces::RunSource::kCuda) &&
        timelines[i].steps.size() == 1)
      std::fprintf(stderr,
                   "meshscope: warning: %s: one step, the run's first, whose warm-up (caches, "
                   "page faults) the fit takes for its rates; of a run of 2 steps or more it "
                   "leaves the first out\n",
                   a.traces[i].c_str());
  }
  std::printf("written: %s\n", a.out.c_str());
}

}  // namespace

void add_calibrate_command(CLI::App& app) {
  auto args = std::make_shared<CalibrateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate",
      "Fit compute rates per phase and link alpha/beta from meshscope's own profiled traces "
      "(meshscope run --out), or the collective link alone from the NCCL kernels of a PyTorch "
      "profile (a folder of a job's ranks: each collective timed on its last rank to arrive), "
      "into a calibration file for simulate/predict --calibration; or, with --gemm-rates, GEMM "
      "rates from a benchmark's CSV or an imported PyTorch profile.");
  cmd->add_option("TRACE", args->traces,
                  "profiled traces: files, or a folder of one run's per-rank files")
      ->check(input_path_check());
  cmd->add_option("-o,--out", args->out, "calibration JSON to write (required with traces)")
      ->check(output_file_check());
  cmd->add_option(
      "--hardware", args->hardware,
      "catalog entry the traces ran on (default: the entry of the GPU the traces recorded, "
      "else cpu-local; with --gemm-rates it must be named)");
  cmd->add_option("--precision", args->precision, "precision the traces computed in")
      ->capture_default_str();
  CLI::Option* rank_from = add_rank_from_option(*cmd, args->rank_from);
  cmd->add_option("--gemm-rates", args->gemm.file,
                  "instead of traces: a CSV of measured GEMM rates (b,m,n,k,flops_per_s, as "
                  "meshscope-kernel-check --gemm-rates writes on a GPU), or a PyTorch profiler "
                  "(Kineto) trace recorded with record_shapes=True (or a folder of them, a job's "
                  "ranks), whose bf16/fp16 aten::mm, "
                  "addmm, bmm and baddbmm ops give one rate per shape (their FLOPs over their "
                  "kernels' time), to check against the --hardware entry's GEMM model: its error "
                  "once a rate scale and a time per kernel are fitted, and the k_half that fits "
                  "best")
      ->type_name("FILE")
      ->check(input_path_check())
      ->excludes("TRACE")
      ->excludes("--out")
      ->excludes("--precision")
      ->excludes(rank_from)
      ->needs("--hardware");  // calibrate's default, cpu-local, is no GPU's table
  cmd->add_option("--compare", args->gemm.compare,
                  "with --gemm-rates: a CSV (or trace) of measured rates of other shapes from the "
                  "same run, "
                  "each set beside the model's rate with the fit --gemm-rates found (its rate "
                  "scale and time per kernel)")
      ->type_name("FILE")
      ->check(input_path_check())
      ->needs("--gemm-rates");
  cmd->add_option("--held-rates", args->gemm.held,
                  "with --gemm-rates (a table): a CSV of GEMM rates held busy at the power limit "
                  "(b,m,n,k,flops_per_s; scripts/gpu-check.sh keeps the held rate of "
                  "meshscope-kernel-check --sustained as held.csv), each over the entry's burst "
                  "rate for its shape: the sustained share (efficiency.sustained) they measure; "
                  "--write-hardware writes it, over the burst rate with the fit")
      ->type_name("FILE")
      ->check(input_path_check())
      ->needs("--gemm-rates");
  cmd->add_flag("--json", args->gemm.json, "with --gemm-rates: print the check as JSON")
      ->needs("--gemm-rates");
  cmd->add_flag("--fp8", args->gemm.fp8,
                "with --gemm-rates: the rates are of FP8 GEMMs (meshscope-kernel-check "
                "--gemm-rates --fp8): set them beside the entry's FP8 GEMM model (peak_flops.fp8, "
                "efficiency.gemm_fp8_max and fp8_k_half), and --write-hardware scales gemm_fp8_max")
      ->needs("--gemm-rates");
  cmd->add_option("--write-hardware", args->gemm.write_hardware,
                  "with --gemm-rates: write the --hardware entry as a hardware file with its GEMM "
                  "ceiling (efficiency.gemm_max) scaled by the fit and its sustained share 1 for "
                  "rates from a trace (they were taken inside a run), or the share --held-rates "
                  "measures; give it to predict as "
                  "\"cluster\": {\"gpu\": \"FILE\"}")
      ->type_name("FILE")
      ->check(output_file_check())
      ->needs("--gemm-rates");
  cmd->callback([args] { run(*args); });
}

}  // namespace meshscope::cli
