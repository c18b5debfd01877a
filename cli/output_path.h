// The check every output-path option gets when the command line is parsed, before any work.
#pragma once

#include <CLI/CLI.hpp>

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace meshscope::cli {

enum class DashMeans { kRefused, kStdout };

// A CLI11 check that fails the parse when the path could not be written later: empty, a missing
// or read-only folder, a special file or symbolic link (traces::check_output_path). So
// `run --out /nonexistent/x.json` fails at once instead of after the whole run. With
// DashMeans::kStdout, "-" passes (the command writes to stdout); else it is refused, not taken as
// a file named "-" (`./-` names one).
CLI::Validator output_file_check(DashMeans dash = DashMeans::kRefused);

// For an option that writes a Chrome trace (JSON; gzip-compressed when the name ends in .gz):
// refuses a name that says another format (.sqlite, .nsys-rep, .pftrace, .zst, .tar.gz, ...),
// which tools that go by the name would misread. Other names (.json, .trace, none) pass.
CLI::Validator chrome_trace_name_check();

// Why `path` is no name for a schedule file (schedule text, or torch's CSV when `torch_csv`), or
// "": a name the readers take for something else. The schedule readers go by the name (a .csv
// file is torch's CSV), so schedule text named .csv could not be read back; a .json or .gz name
// is a trace's, which analyze, convert and the viewer read from a folder as a rank's (and the file
// is not compressed).
std::string schedule_file_name_problem(const std::string& path, bool torch_csv);

// schedule_file_name_problem for an option that writes schedule text (run --dump-schedule,
// simulate --schedule-out).
CLI::Validator schedule_text_name_check();

// For an option that names a file or folder to read: refuses an empty path (an unset "$F" in a
// script), which some commands took as the option not given: `run --schedule-file ''` ran the
// default schedule and reported success.
CLI::Validator input_path_check();

// What a command reads: {what it is ("--config", "the input trace"), path}; a folder stands for
// the files in it.
using ReadPaths = std::vector<std::pair<std::string, std::string>>;

// A command line refused for how its options go together (`schedules --grid` with no schedule,
// an output that names an input): a parse error, so main prints it with the parser's exit status
// 2, as for an option CLI11 itself refuses.
inline CLI::ValidationError usage_error(const std::string& message) {
  return CLI::ValidationError(message);
}

// Throws usage_error when two of a command's output options name the same file (one would replace
// the other), or when one names a file the command reads, or a file inside a folder it reads
// (writing it would replace its own input: `convert t.json --out t.json`, `predict --config
// c.json --csv c.json`). Outputs are each {option, path}, empty paths and "-" (stdout) left out.
// An output and an input are compared as files (the same file under another name, a hard link,
// is caught); an output that does not exist yet is no input.
void require_distinct_outputs(
    std::initializer_list<std::pair<std::string_view, const std::string*>> outputs,
    const ReadPaths& inputs = {});

}  // namespace meshscope::cli
