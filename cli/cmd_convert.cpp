// `meshscope convert TRACE... -o OUT.json`: any trace meshscope imports (Kineto / Chrome JSON,
// .json.gz, Nsight Systems SQLite, per-rank files or a folder of them) as a meshscope Chrome
// trace, written whole or not at all.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/output_path.h"
#include "cli/rank_from_option.h"
#include "cli/read_progress.h"
#include "traces/atomic_file.h"
#include "traces/chrome_export.h"
#include "traces/import/load_trace.h"
#include "traces/timeline_merge.h"

namespace meshscope::cli {
namespace {

// --align by name (a name, not a transform to the enum: CLI11 printed a one-byte enum's values
// as raw bytes in --help, and a bad name as "Check bogus value in {base-time->,...").
const std::map<std::string, traces::ClockAlign> kAligns = {
    {"none", traces::ClockAlign::kNone},
    {"base-time", traces::ClockAlign::kBaseTime},
    {"collective-ends", traces::ClockAlign::kCollectiveEnds}};

namespace fs = std::filesystem;

struct ConvertArgs {
  std::vector<std::string> inputs;
  std::string output;
  bool no_host = false;
  bool per_rank = false;
  std::string align = "collective-ends";  // checked against kAligns when parsed
  std::string rank_from;                  // --rank-from
};

// --per-rank: each rank's part (traces::split_by_rank) as rank<R>.json in `folder`, with
// distributedInfo, for tools that read a job as one file per rank (HolisticTraceAnalysis's
// TraceAnalysis(trace_dir=...)). All are synced before any is renamed into place, so a failure
// (a full disk) leaves the folder as it was. A folder holding other trace files is refused: HTA
// would read them as ranks of this job.
void write_per_rank(const traces::Timeline& t, const fs::path& folder) {
  std::error_code ec;  // a file in the folder's place was refused with the command line
  const auto parts = traces::split_by_rank(t);
  std::set<std::string> names;
  for (const auto& [rank, part] : parts) names.insert("rank" + std::to_string(rank) + ".json");
  if (fs::is_directory(folder, ec)) {
    for (const fs::path& f : traces::trace_files_in(folder)) {
      if (!names.count(f.filename().string()))
        throw UserError(folder.string() + " holds " + f.filename().string() +
                        ", which is no rank of this job's: a tool reading the folder would take "
                        "it for one (give an empty folder)");
    }
  } else if (!fs::create_directory(folder, ec) && ec) {
    throw UserError(folder.string() + ": cannot create the folder: " + ec.message());
  }
  std::vector<traces::AtomicFile> files;
  size_t spans = 0, flows_within = 0;
  for (const auto& [rank, part] : parts) {
    files.emplace_back(folder / ("rank" + std::to_string(rank) + ".json"));
    traces::write_chrome_trace(part, files.back());
    files.back().sync();
    spans += part.spans.size();
    flows_within += part.flows.size();
  }
  for (traces::AtomicFile& f : files) f.commit();
  std::printf(
      "wrote %s: %zu ranks (rank<R>.json each), %zu spans; the %zu flows between ranks "
      "are in none\n",
      folder.c_str(), parts.size(), spans, t.flows.size() - flows_within);
}

// --per-rank's folder, checked before the traces are read (a folder in a missing one failed with
// exit 1 after the import): an existing folder must take new files, a new one must be creatable in
// its parent; a file in its place is refused.
void check_per_rank_folder(const fs::path& folder) {
  std::error_code ec;
  if (fs::exists(folder, ec) && !fs::is_directory(folder, ec))
    throw usage_error("--per-rank: -o names a folder to write rank<R>.json into; " +
                      folder.string() + " is a file");
  try {
    traces::check_output_path(fs::is_directory(folder, ec) ? folder / "rank0.json" : folder);
  } catch (const std::exception& e) {
    throw usage_error(std::string("--out: ") + e.what());
  }
}

void run(const ConvertArgs& args) {
  ReadPaths inputs;
  for (const std::string& p : args.inputs) inputs.emplace_back("an input trace", p);
  require_distinct_outputs({{"--out", &args.output}}, inputs);
  const std::vector<fs::path> paths(args.inputs.begin(), args.inputs.end());
  traces::ImportOptions options = options_reporting_progress("convert");
  options.keep_host = !args.no_host;
  options.keep_origins = true;  // correlation ids, streams and args as the source wrote them
  options.align = kAligns.at(args.align);
  options.rank_from_file_order = args.rank_from == kRankFromFileOrder;
  traces::ImportReport report;
  const traces::Timeline t = traces::load_trace_paths(paths, options, &report);
  for (const std::string& line : report.lines())
    std::fprintf(stderr, "meshscope: warning: %s\n", line.c_str());
  traces::require_spans(t, args.inputs.size() == 1 ? args.inputs[0] : "the traces", &report);
  if (args.per_rank) {
    write_per_rank(t, fs::path(args.output));
    return;
  }
  if (args.output == "-") {
    // The trace itself goes to stdout; the summary line to stderr, so a pipe gets JSON only.
    traces::write_chrome_trace(t, [](std::string_view chunk) {
      if (std::fwrite(chunk.data(), 1, chunk.size(), stdout) != chunk.size())
        throw std::runtime_error("cannot write to stdout");
    });
    if (std::fflush(stdout) != 0) throw std::runtime_error("cannot write to stdout");
    std::fprintf(stderr, "wrote stdout: %zu devices, %zu spans, %zu flows, %zu steps\n",
                 t.devices.size(), t.spans.size(), t.flows.size(), t.steps.size());
    return;
  }
  traces::write_chrome_trace(t, fs::path(args.output));
  std::printf("wrote %s: %zu devices, %zu spans, %zu flows, %zu steps\n", args.output.c_str(),
              t.devices.size(), t.spans.size(), t.flows.size(), t.steps.size());
}

}  // namespace

void add_convert_command(CLI::App& app) {
  auto args = std::make_shared<ConvertArgs>();
  CLI::App* cmd = app.add_subcommand(
      "convert",
      "Import traces (Kineto/Chrome JSON, .json.gz, Nsight SQLite) as a meshscope trace");
  cmd->add_option("TRACE", args->inputs, "trace files, or a folder of per-rank traces")
      ->required()
      ->check(input_path_check());
  cmd->add_option("-o,--out", args->output,
                  "output Chrome trace (.json; .gz: compressed); - for stdout; with --per-rank, "
                  "a folder")
      ->required();
  cmd->add_flag("--per-rank", args->per_rank,
                "write one file per rank into the folder -o names (rank<R>.json, each with "
                "Kineto's distributedInfo), as HolisticTraceAnalysis reads a job; the flows "
                "between ranks are left out");
  cmd->add_flag("--no-host", args->no_host, "drop host events (CPU ops, runtime calls)");
  // -o is a trace file, checked as every trace output is, unless --per-rank makes it a folder.
  cmd->parse_complete_callback([args] {
    if (args->per_rank) {
      if (args->output == "-") throw usage_error("--per-rank writes files into a folder, not -");
      if (args->output.empty()) throw usage_error("--out: the path is empty");
      check_per_rank_folder(args->output);
      return;
    }
    for (CLI::Validator check :
         {chrome_trace_name_check(), output_file_check(DashMeans::kStdout)}) {
      std::string path = args->output;
      if (const std::string why = check(path); !why.empty())
        throw CLI::ValidationError("--out", why);
    }
  });
  cmd->add_option("--align", args->align,
                  "clock alignment of per-rank files: collective-ends (base-time, then refined "
                  "by the ends of matching NCCL collectives), base-time (each file's "
                  "baseTimeNanoseconds or session start) or none (each file's own time axis)")
      ->check(CLI::IsMember({"none", "base-time", "collective-ends"}).description(""))
      ->type_name("MODE")
      ->capture_default_str();
  add_rank_from_option(*cmd, args->rank_from);
  cmd->callback([args] { run(*args); });
}

}  // namespace meshscope::cli
