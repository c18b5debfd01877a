// `meshscope analyze TRACE... [--json]`: import traces, print the per-device analysis.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/json_text.h"
#include "cli/output_path.h"
#include "cli/rank_from_option.h"
#include "cli/read_progress.h"
#include "cli/torch_trace_schedule.h"
#include "traces/analysis.h"
#include "traces/analysis_critical_path.h"
#include "traces/analysis_hta_window.h"
#include "traces/analysis_kernels.h"
#include "traces/analysis_ranges.h"
#include "traces/analysis_report.h"
#include "traces/analysis_stragglers.h"
#include "traces/import/hta_events.h"
#include "traces/import/load_trace.h"
#include "traces/input_file.h"

namespace meshscope::cli {
namespace {

namespace fs = std::filesystem;

struct AnalyzeArgs {
  std::vector<std::string> traces;
  bool json = false;
  int64_t kernel_wait_ns = traces::HtaOptions{}.consecutive_kernel_delay_ns;
  std::string window = "default";
  std::vector<std::string> comm_kernels;  // --comm-kernel
  std::string rank_from;                  // --rank-from
  int kernels = 0;                        // --kernels N: top N kernels per device; 0: no breakdown
  int ranges = 0;                         // --ranges N: top N annotation ranges (nvtx_sum); 0: none
  bool stragglers = false;
  bool critical_path = false;
};

traces::ImportOptions import_options(const AnalyzeArgs& args) {
  traces::ImportOptions options = options_reporting_progress("analyze");
  for (const std::string& p : args.comm_kernels) {
    try {
      std::regex check(p, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      throw usage_error("--comm-kernel '" + p + "': not a regular expression (" + e.what() + ")");
    }
  }
  options.comm_kernel_patterns = args.comm_kernels;
  options.rank_from_file_order = args.rank_from == kRankFromFileOrder;
  return options;
}

// The files of the run: each argument, a folder as its trace files.
std::vector<fs::path> run_files(const AnalyzeArgs& args) {
  std::vector<fs::path> files;
  for (const std::string& p : args.traces) {
    if (fs::is_directory(p)) {
      const auto inside = traces::trace_files_in(p);
      files.insert(files.end(), inside.begin(), inside.end());
    } else {
      files.emplace_back(p);
    }
  }
  return files;
}

// --window hta: HTA 0.5's own figures, from each file's raw events (analysis_hta_window.h).
std::vector<traces::HtaRankFigures> hta_window(const AnalyzeArgs& args) {
  std::vector<traces::HtaEventTable> tables;
  for (const fs::path& f : run_files(args)) {
    tables.push_back(traces::read_hta_events(f, options_reporting_progress("analyze")));
    const std::string& source = tables.back().meshscope_source;
    if (!source.empty() && !tables.back().distributed_info &&
        tables.back().process_ranks.size() != 1) {
      // meshscope writes distributedInfo only for a trace whose rank it knows: without it, its
      // devices' ranks tell. Several (a run's every device, a converted folder) HTA would read
      // as one rank and give figures that mean nothing (a negative kernel wait); one (an Nsight
      // Systems import of one GPU) is a rank's trace.
      throw UserError(f.string() + ": --window hta reads Kineto traces, one rank per file, as " +
                      "HTA does; this file meshscope wrote (source " + source +
                      ") holds several ranks: analyze it without --window hta, or convert each " +
                      "rank's trace on its own");
    }
    if (args.rank_from == kRankFromFileOrder)
      tables.back().rank = static_cast<int>(tables.size() - 1);
  }
  const bool filter = traces::hta_step_filter_applies(tables);
  traces::HtaWindowOptions options;
  options.consecutive_kernel_delay_us = static_cast<double>(args.kernel_wait_ns) / 1000.0;
  std::vector<traces::HtaRankFigures> out;
  for (const traces::HtaEventTable& t : tables) {
    try {
      out.push_back(traces::hta_rank_figures(t, filter, options));
    } catch (const std::runtime_error& e) {
      throw UserError(e.what());
    }
  }
  return out;
}

traces::Timeline load(const AnalyzeArgs& args, traces::ImportReport& report) {
  // A missing trace is said before a --comm-kernel pattern is refused (import_options): it had
  // come first, exit status 1, not the usage error's 2. load_trace_paths looks again, finding them.
  std::vector<fs::path> paths;
  for (const std::string& p : args.traces) {
    std::error_code ec;
    if (!fs::exists(p, ec)) throw UserError(p + ": " + traces::why_missing(p));
    paths.emplace_back(p);
  }
  return traces::load_trace_paths(paths, import_options(args), &report);
}

nlohmann::json clocks_json(const traces::ImportReport& report) {
  nlohmann::json out = nlohmann::json::array();
  for (const traces::RankClock& c : report.clocks) {
    out.push_back(
        {{"file", c.file},
         {"rank", c.rank},
         {"offset_ns", c.offset_ns},
         {"matched_collectives", c.matched_collectives},
         {"reference_rank",
          c.reference_rank >= 0 ? nlohmann::json(c.reference_rank) : nlohmann::json(nullptr)},
         {"aligned_by_collectives", c.matched_collectives > 0},
         {"residual_skew_ns",
          c.matched_collectives > 0 ? nlohmann::json(c.residual_skew_ns) : nlohmann::json(nullptr)},
         {"max_skew_ns",
          c.matched_collectives > 0 ? nlohmann::json(c.max_skew_ns) : nlohmann::json(nullptr)}});
  }
  return out;
}

void print_clocks(const traces::ImportReport& report) {
  if (report.clocks.size() < 2) return;
  std::printf("\nclock alignment:\n");
  for (const traces::RankClock& c : report.clocks) {
    if (&c == &report.clocks.front()) {
      // The first rank's clock is the one the others are aligned to: nothing of its own matched.
      std::printf("  rank %d  %s  offset %s  the reference: the other ranks are aligned to it\n",
                  c.rank, c.file.c_str(), traces::format_duration(c.offset_ns).c_str());
      continue;
    }
    if (c.matched_collectives == 0) {
      // Nothing was matched, so no skew was measured: a "0 ns" would read as a measured zero.
      std::printf("  rank %d  %s  offset %s  not aligned by collectives (none matched)\n", c.rank,
                  c.file.c_str(), traces::format_duration(c.offset_ns).c_str());
      continue;
    }
    const std::string with =
        c.reference_rank >= 0 ? " with rank " + std::to_string(c.reference_rank) : "";
    std::printf("  rank %d  %s  offset %s  residual skew %s (max %s, %d collectives%s)\n", c.rank,
                c.file.c_str(), traces::format_duration(c.offset_ns).c_str(),
                traces::format_duration(c.residual_skew_ns).c_str(),
                traces::format_duration(c.max_skew_ns).c_str(), c.matched_collectives,
                with.c_str());
  }
}

// A torch job on CPU ranks shows comm 0: gloo's send and recv ranges are annotations, as each
// holds its rank's wait for the peer (docs/ACCURACY.md, "Replaying an imported job"), which the
// bubble attribution counts as peer wait. Said under the tables, as an HTA user would read comm
// 0 as no communication.
void print_gloo_note(const traces::Timeline& t) {
  size_t ranges = 0;
  for (const traces::Span& s : t.spans) {
    if (s.kind != traces::SpanKind::kAnnotation) continue;
    const std::string_view name = t.span_name(s);
    ranges += name == "gloo:send" || name == "gloo:recv";
  }
  if (ranges == 0) return;
  std::printf(
      "\nnote: the %zu gloo:send and gloo:recv ranges are not in comm: each holds its rank's wait "
      "for the peer, idle time that the bubble attribution counts as peer wait (gloo's "
      "collectives are comm)\n",
      ranges);
}

void run(const AnalyzeArgs& args) {
  if (args.kernel_wait_ns < 0) throw usage_error("--kernel-wait-ns must be >= 0");
  traces::ImportReport report;
  const traces::Timeline timeline = load(args, report);
  if (timeline.spans.empty()) {
    // Nothing usable: the warnings say why (what was skipped), then the error.
    for (const std::string& w : report.lines())
      std::fprintf(stderr, "meshscope: warning: %s\n", w.c_str());
    traces::require_spans(timeline, args.traces.size() == 1 ? args.traces[0] : "the traces",
                          &report);
  }
  traces::AnalysisOptions options;
  options.hta.consecutive_kernel_delay_ns = args.kernel_wait_ns;
  traces::TimelineAnalysis analysis = traces::analyze(timeline, options);
  const bool hta = args.window == "hta";
  std::vector<traces::HtaRankFigures> hta_ranks;
  if (hta) {
    hta_ranks = hta_window(args);
    analysis.hta.clear();  // replaced by HTA's own figures
  }
  std::vector<std::string> warnings = report.lines();
  // A job's folder (or several files) without some ranks its process groups name: the table
  // would show a smaller pipeline without a word (schedules and predict --from-trace refuse it).
  std::error_code ec;
  if (args.traces.size() > 1 || std::filesystem::is_directory(args.traces.front(), ec)) {
    if (const std::string missing = untraced_ranks_text(timeline); !missing.empty())
      warnings.push_back(missing + ": the figures are of the traced ranks alone");
  }
  if (const auto detached = traces::detached_activity(timeline)) {
    warnings.push_back(traces::describe(*detached));
  }
  if (args.json) {
    nlohmann::json j = traces::to_json(analysis);
    j["traces"] = args.traces;
    j["window"] = args.window;
    if (args.kernels > 0) {
      j["kernels"] =
          traces::to_json(traces::kernel_breakdown(timeline, static_cast<size_t>(args.kernels)));
    }
    if (args.ranges > 0)
      j["ranges"] =
          traces::to_json(traces::range_summary(timeline, static_cast<size_t>(args.ranges)));
    if (args.stragglers) j["stragglers"] = traces::to_json(traces::stragglers(timeline), timeline);
    if (args.critical_path) {
      j["critical_path"] = traces::to_json(traces::critical_paths(timeline), timeline);
    }
    if (hta) {
      j["hta"] = nlohmann::json::array();
      for (const auto& f : hta_ranks) j["hta"].push_back(traces::to_json(f));
    }
    j["import_warnings"] = warnings;
    j["clocks"] = clocks_json(report);
    std::cout << json_text(j) << "\n";
  } else {
    for (const std::string& w : warnings)
      std::fprintf(stderr, "meshscope: warning: %s\n", w.c_str());
    if (analysis.devices.empty()) {
      // Only host processes: a bubble fraction of 0% would read as a fully busy device.
      std::printf(
          "no GPU or accelerator activity found (host events only): no device time to "
          "analyze\n");
      // A CPU profile's ranges are what it has to say.
      if (args.ranges > 0)
        std::fputs(("\n" + traces::format_range_table(
                               traces::range_summary(timeline, static_cast<size_t>(args.ranges))))
                       .c_str(),
                   stdout);
      std::fflush(stdout);
      return;
    }
    if (analysis.step_time_ns == 0)  // a table of 0 ns and 0% idle would read as a busy device
      std::printf(
          "every device activity here lasts 0 ns at one instant: a window of no time, nothing to "
          "measure\n");
    std::fputs(traces::format_table(analysis).c_str(), stdout);
    print_gloo_note(timeline);
    if (hta) std::fputs(("\n" + traces::format_hta_window_table(hta_ranks)).c_str(), stdout);
    if (args.kernels > 0) {
      const auto k = traces::kernel_breakdown(timeline, static_cast<size_t>(args.kernels));
      std::fputs(("\n" + traces::format_kernel_table(k)).c_str(), stdout);
    }
    if (args.ranges > 0) {
      const auto r = traces::range_summary(timeline, static_cast<size_t>(args.ranges));
      std::fputs(("\n" + traces::format_range_table(r)).c_str(), stdout);
    }
    if (args.stragglers) {
      std::fputs(
          ("\n" + traces::format_straggler_table(traces::stragglers(timeline), timeline)).c_str(),
          stdout);
    }
    if (args.critical_path) {
      std::fputs(
          ("\n" + traces::format_critical_path(traces::critical_paths(timeline), timeline)).c_str(),
          stdout);
    }
    print_clocks(report);
  }
  std::fflush(stdout);
}

}  // namespace

void add_analyze_command(CLI::App& app) {
  auto args = std::make_shared<AnalyzeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "analyze",
      "Per-device busy, compute, communication, idle and bubble time of traces (meshscope's own "
      "Chrome traces, PyTorch profiler / Kineto JSON, Nsight Systems SQLite), with the "
      "HolisticTraceAnalysis-style breakdown. Definitions: traces/analysis.h.");
  cmd->add_option("TRACE", args->traces,
                  "trace files (.json, .json.gz, .sqlite); several files or a folder are the "
                  "per-rank files of one run")
      ->required()
      ->check(input_path_check());
  cmd->add_flag("--json", args->json, "print JSON (every key: docs/OUTPUT.md)");
  cmd->add_option("--kernel-wait-ns", args->kernel_wait_ns,
                  "gaps between kernels shorter than this count as kernel wait (HTA 0.5 compares "
                  "its default 30 with µs gaps: 30000 ns)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{3600} * 1'000'000'000));  // up to an hour
  cmd->add_option("--comm-kernel", args->comm_kernels,
                  "REGEX: kernels whose names match count as communication, besides NCCL/RCCL, "
                  "vLLM custom and symmetric-memory all-reduce, DeepEP and NVSHMEM kernels "
                  "(traces/import/comm_kernels.h); repeatable");
  add_rank_from_option(*cmd, args->rank_from);
  cmd->add_option("--kernels", args->kernels,
                  "N: the N kernels per device that took the most time, their share and the "
                  "compute / communication / memory split (traces/analysis_kernels.h)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--ranges", args->ranges,
                  "N: the N annotation ranges (NVTX ranges of an Nsight export or a CUPTI "
                  "capture, record_function ranges of a PyTorch profile) with the most time, as "
                  "nsys stats' nvtx_sum lists them: instances, total, share, mean, median, min, "
                  "max (traces/analysis_ranges.h)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_flag("--stragglers", args->stragglers,
                "per collective run on several devices, who arrived last and how long the others "
                "waited (traces/analysis_stragglers.h)");
  cmd->add_flag("--critical-path", args->critical_path,
                "per step, the chain of work that decided its length and its share per kind and "
                "rank (traces/analysis_critical_path.h)");
  cmd->add_option("--window", args->window,
                  "default: step windows from ProfilerStep#N, each grown to cover the GPU work "
                  "launched inside it (GPU work runs behind the host: a step can read longer than "
                  "its range's dur), else first to last GPU activity; "
                  "hta: the HTA section computed as HolisticTraceAnalysis 0.5 does (last step "
                  "dropped, GPU events without a CPU launch dropped, µs rounding, per-stream idle "
                  "split); Kineto JSON only, one rank per file (a Kineto trace `convert` wrote "
                  "too, not the traces of run or simulate)")
      ->check(CLI::IsMember({"default", "hta"}))
      ->capture_default_str();
  cmd->callback([args] { run(*args); });
}

}  // namespace meshscope::cli
