// `meshscope validate FILE [--diff OTHER] [--quiet] [--grid]`: load a schedule file (text or
// torch's CSV), check it (sim/schedule/validator.h), and optionally show how it differs from
// another one.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/output_path.h"
#include "sim/schedule/schedule_diff.h"
#include "sim/schedule/schedule_file.h"
#include "sim/schedule/schedule_grid.h"
#include "sim/schedule/schedule_text.h"
#include "sim/schedule/torch_csv.h"
#include "sim/schedule/validator.h"

namespace meshscope::cli {
namespace {

struct ValidateArgs {
  std::string file;
  std::string other;
  bool quiet = false;
  bool grid = false;
};

schedule::LoadedSchedule load(const std::string& path) {
  try {
    return schedule::load_schedule_file(path);
  } catch (const schedule::ScheduleParseError& e) {
    throw UserError(e.what());
  }
}

void print_diff(const ValidateArgs& args, const schedule::Schedule& s) {
  const schedule::Schedule other = load(args.other).schedule;
  const std::string d = schedule::diff(s, other, args.file, args.other);
  if (d.empty()) {
    std::printf("%s and %s: no differences\n", args.file.c_str(), args.other.c_str());
  } else {
    std::cout << d;
  }
}

void run(const ValidateArgs& args) {
  const schedule::LoadedSchedule loaded = load(args.file);
  const schedule::Schedule& s = loaded.schedule;
  if (!args.other.empty()) print_diff(args, s);
  const schedule::ValidationResult result = schedule::validate(s);
  if (!result.ok()) {
    std::string message =
        schedule::location_in(args.file, loaded, result.error->rank, result.error->step) + ": " +
        schedule::invalid_schedule_message(s, result.error->message);
    if (!args.quiet && !result.error->grid.empty()) {
      message += "\n" + result.error->grid;
      while (!message.empty() && message.back() == '\n') message.pop_back();
    }
    throw UserError(message);
  }
  if (args.grid) std::cout << schedule::format_grid(s);
  if (!args.quiet) std::printf("%s: %s\n", args.file.c_str(), result.report(s).c_str());
}

}  // namespace

void add_validate_command(CLI::App& app) {
  auto args = std::make_shared<ValidateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "validate",
      "Check a schedule file (text or torch's CSV): every microbatch's work exactly once, inputs "
      "before use, "
      "matching sends and receives, agreeing collectives, no deadlock. Exit 0 when valid; "
      "otherwise the error, naming its line and column (in torch's CSV, the cell's), rank and "
      "action, and the "
      "step x rank grid");
  cmd->add_option("FILE", args->file,
                  "schedule file (`meshscope schedules --dump` writes one): " +
                      std::string(schedule::kScheduleFileHelp))
      ->required()
      ->check(input_path_check());
  cmd->add_option("--diff", args->other,
                  "also print how FILE differs from OTHER (first differing step per rank)")
      ->check(input_path_check())
      ->type_name("OTHER");
  cmd->add_flag("--grid", args->grid, "print the whole step x rank grid of a valid schedule");
  // Quiet and an output asked for contradict each other: one of them would be ignored.
  cmd->add_flag("--quiet,-q", args->quiet, "print nothing when valid; only the error line if not")
      ->excludes("--grid")
      ->excludes("--diff");
  cmd->callback([args] { run(*args); });
}

}  // namespace meshscope::cli
