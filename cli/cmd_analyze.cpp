// `meshscope analyze TRACE... [--json]`: import traces, print the per-device analysis.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "traces/analysis.h"
#include "traces/analysis_report.h"
#include "traces/import/load_trace.h"

namespace meshscope::cli {
namespace {

namespace fs = std::filesystem;

struct AnalyzeArgs {
  std::vector<std::string> traces;
  bool json = false;
  int64_t kernel_wait_ns = traces::HtaOptions{}.consecutive_kernel_delay_ns;
};

traces::Timeline load(const AnalyzeArgs& args, traces::ImportReport& report) {
  std::vector<fs::path> paths;
  for (const std::string& p : args.traces) {
    std::error_code ec;
    if (!fs::exists(p, ec)) throw UserError(p + ": no such file or folder");
    paths.emplace_back(p);
  }
  // One file is one trace (possibly many ranks, as meshscope's own exports are); several files or
  // a folder are the per-rank files of one run.
  if (paths.size() == 1 && !fs::is_directory(paths[0])) {
    return traces::load_trace(paths[0], {}, &report);
  }
  return traces::load_traces(paths, {}, &report);
}

nlohmann::json clocks_json(const traces::ImportReport& report) {
  nlohmann::json out = nlohmann::json::array();
  for (const traces::RankClock& c : report.clocks) {
    out.push_back({{"file", c.file},
                   {"rank", c.rank},
                   {"offset_ns", c.offset_ns},
                   {"matched_collectives", c.matched_collectives},
                   {"residual_skew_ns", c.residual_skew_ns},
                   {"max_skew_ns", c.max_skew_ns}});
  }
  return out;
}

void print_clocks(const traces::ImportReport& report) {
  if (report.clocks.size() < 2) return;
  std::printf("\nclock alignment:\n");
  for (const traces::RankClock& c : report.clocks) {
    std::printf("  rank %d  %s  offset %s  residual skew %s (max %s, %d collectives)\n", c.rank,
                c.file.c_str(), traces::format_duration(c.offset_ns).c_str(),
                traces::format_duration(c.residual_skew_ns).c_str(),
                traces::format_duration(c.max_skew_ns).c_str(), c.matched_collectives);
  }
}

void run(const AnalyzeArgs& args) {
  if (args.kernel_wait_ns < 0) throw UserError("--kernel-wait-ns must be >= 0");
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
  const traces::TimelineAnalysis analysis = traces::analyze(timeline, options);
  const std::vector<std::string> warnings = report.lines();
  if (args.json) {
    nlohmann::json j = traces::to_json(analysis);
    j["traces"] = args.traces;
    j["import_warnings"] = warnings;
    j["clocks"] = clocks_json(report);
    std::cout << j.dump(2) << "\n";
  } else {
    for (const std::string& w : warnings)
      std::fprintf(stderr, "meshscope: warning: %s\n", w.c_str());
    std::fputs(traces::format_table(analysis).c_str(), stdout);
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
      ->required();
  cmd->add_flag("--json", args->json, "print JSON (keys documented in traces/analysis_report.h)");
  cmd->add_option("--kernel-wait-ns", args->kernel_wait_ns,
                  "gaps between kernels shorter than this count as kernel wait (HTA's default 30)")
      ->capture_default_str();
  cmd->callback([args] { run(*args); });
}

}  // namespace meshscope::cli
