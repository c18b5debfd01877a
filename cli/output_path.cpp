// output_file_check: traces::check_output_path as a CLI11 validator.
#include "cli/output_path.h"

#include <cctype>
#include <exception>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "cli/commands.h"

#include "profiler/runtime/process_link.h"
#include "traces/atomic_file.h"

namespace meshscope::cli {

CLI::Validator input_path_check() {
  return CLI::Validator(
      [](std::string& path) -> std::string {
        return path.empty() ? "the path is empty" : std::string();
      },
      "PATH");
}

CLI::Validator output_file_check(DashMeans dash) {
  return CLI::Validator(
      [dash](std::string& path) -> std::string {
        if (path == "-") {
          return dash == DashMeans::kStdout
                     ? std::string()
                     : std::string(
                           "'-' (standard output) is not taken here: this option writes "
                           "a file; give its path (./- for a file named '-')");
        }
        // Under mpirun only process 0 writes: a path the others could not write is theirs to
        // ignore, not a reason to end the job.
        if (runtime::launched_process_count() > 1 && runtime::launched_process_index() != 0)
          return {};
        try {
          traces::check_output_path(path);
        } catch (const std::exception& e) {
          return e.what();
        }
        return {};
      },
      "FILE");
}

CLI::Validator chrome_trace_name_check() {
  return CLI::Validator(
      [](std::string& path) -> std::string {
        std::string lower = path;
        for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        // ".gz" alone is the compressed JSON meshscope writes; ".tar.gz" is a tar file.
        static constexpr std::string_view kOther[] = {
            ".tar.gz",   ".tgz",   ".sqlite",  ".sqlite3",
            ".nsys-rep", ".qdrep", ".pftrace", ".perfetto-trace",
            ".pb",       ".proto", ".zst",     ".bz2",
            ".xz",       ".lz4",   ".zip",     ".tar",
            ".csv",      ".html"};
        for (std::string_view other : kOther) {
          if (lower.ends_with(other))
            return "'" + path + "': a Chrome trace (JSON) is written here, not " +
                   std::string(other) + ": name it .json, or .json.gz to compress it";
        }
        return {};
      },
      "");
}

std::string schedule_file_name_problem(const std::string& path, bool torch_csv) {
  std::string lower = path;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const char* want = torch_csv ? ".csv" : ".sched";
  if (!torch_csv && lower.ends_with(".csv"))
    return "'" + path + "': a .csv file is read as torch's CSV, but schedule text is written " +
           "here: name it .sched";
  for (const char* trace : {".json", ".gz"}) {
    if (lower.ends_with(trace))
      return "'" + path + "': a schedule is written here, not a trace (" + trace + "): name it " +
             want;
  }
  return {};
}

CLI::Validator schedule_text_name_check() {
  return CLI::Validator(
      [](std::string& path) { return schedule_file_name_problem(path, /*torch_csv=*/false); }, "");
}

namespace {

// An output that names an input: see require_distinct_outputs.
void require_apart_from_inputs(
    std::initializer_list<std::pair<std::string_view, const std::string*>> outputs,
    const ReadPaths& inputs) {
  namespace fs = std::filesystem;
  for (const auto& [option, path] : outputs) {
    if (path->empty() || *path == "-") continue;
    std::error_code ec;
    if (!fs::exists(*path, ec)) continue;
    const fs::path folder =
        fs::path(*path).parent_path().empty() ? fs::path(".") : fs::path(*path).parent_path();
    for (const auto& [what, input] : inputs) {
      if (input.empty() || input == "-") continue;
      const bool is_folder = fs::is_directory(input, ec);
      if (is_folder ? fs::equivalent(folder, input, ec) : fs::equivalent(*path, input, ec)) {
        throw usage_error(std::string(option) + " names '" + *path + "', " +
                          (is_folder ? "a file of the folder '" + input + "' read as " + what
                                     : "the file read as " + what +
                                           (input != *path ? " ('" + input + "')" : "")) +
                          ": writing it would replace the input; give another path");
      }
    }
  }
}

}  // namespace

void require_distinct_outputs(
    std::initializer_list<std::pair<std::string_view, const std::string*>> outputs,
    const ReadPaths& inputs) {
  namespace fs = std::filesystem;
  std::vector<std::pair<std::string_view, fs::path>> seen;
  for (const auto& [option, path] : outputs) {
    if (path->empty() || *path == "-") continue;
    std::error_code ec;
    fs::path p = fs::weakly_canonical(fs::absolute(*path, ec), ec);
    if (ec) p = fs::path(*path).lexically_normal();
    for (const auto& [other, q] : seen) {
      if (p == q)
        throw usage_error(std::string(other) + " and " + std::string(option) +
                          " name the same file '" + *path + "': one would replace the other");
    }
    seen.emplace_back(option, std::move(p));
  }
  require_apart_from_inputs(outputs, inputs);
}

}  // namespace meshscope::cli
