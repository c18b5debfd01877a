// The check every output-path option gets when the command line is parsed, before any work.
#pragma once

#include <CLI/CLI.hpp>

namespace meshscope::cli {

enum class DashMeans { kFileNamedDash, kStdout };

// A CLI11 check that fails the parse when the path could not be written later: empty, a missing
// or read-only folder, a special file or symbolic link (traces::check_output_path). So
// `run --out /nonexistent/x.json` fails at once instead of after the whole run. With
// DashMeans::kStdout, "-" passes (the command writes to stdout).
CLI::Validator output_file_check(DashMeans dash = DashMeans::kFileNamedDash);

}  // namespace meshscope::cli
