// `meshscope schedules`: list the schedule families, or generate one as a schedule text file
// (`--dump FAMILY --pp 4 --microbatches 8 [-o FILE]`) to read, hand-edit and `validate`.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>

#include "cli/commands.h"
#include "cli/output_path.h"
#include "sim/schedule/generators.h"
#include "sim/schedule/schedule_grid.h"
#include "sim/schedule/schedule_text.h"

namespace meshscope::cli {
namespace {

struct SchedulesArgs {
  std::string family;  // empty: list the families
  int dp = 1, pp = 1, tp = 1;
  int microbatches = 0;    // 0: pp (or 1)
  int virtual_stages = 0;  // 0: 2 for interleaved, 1 for the others (as `run`)
  int64_t activation_bytes = 0;
  int64_t gradient_bytes = 0;
  std::string out;
  bool grid = false;
};

std::string family_names() {
  std::string out;
  for (const schedule::FamilyInfo& f : schedule::kFamilies) {
    out += (out.empty() ? "" : ", ") + std::string(f.name);
  }
  return out;
}

void list_families() {
  for (const schedule::FamilyInfo& f : schedule::kFamilies) {
    std::printf("%-12s %s\n", std::string(f.name).c_str(), std::string(f.description).c_str());
  }
}

schedule::Schedule generate(const SchedulesArgs& args) {
  const std::optional<schedule::Family> family = schedule::parse_family(args.family);
  if (!family) {
    throw UserError("unknown schedule family '" + args.family + "' (one of " + family_names() +
                    ")");
  }
  schedule::GeneratorConfig config;
  config.family = *family;
  config.mesh = {.dp = args.dp, .pp = args.pp, .tp = args.tp};
  config.microbatches = args.microbatches > 0 ? args.microbatches : args.pp;
  config.virtual_stages =
      args.virtual_stages > 0 ? args.virtual_stages : (*family == schedule::Family::kInterleaved ? 2 : 1);
  if (args.activation_bytes > 0) config.activation_bytes = {args.activation_bytes};
  if (args.gradient_bytes > 0) config.gradient_bytes = {args.gradient_bytes};
  try {
    return schedule::generate(config);
  } catch (const std::invalid_argument& e) {
    throw UserError(e.what());
  }
}

void run(const SchedulesArgs& args) {
  if (args.family.empty()) {
    list_families();
    return;
  }
  const schedule::Schedule s = generate(args);
  if (args.grid) std::cout << schedule::format_grid(s);
  if (args.out.empty()) {
    if (!args.grid) std::cout << schedule::dump(s);
    return;
  }
  try {
    schedule::save_file(s, args.out);
  } catch (const std::runtime_error& e) {
    throw UserError(e.what());
  }
}

}  // namespace

void add_schedules_command(CLI::App& app) {
  auto args = std::make_shared<SchedulesArgs>();
  CLI::App* cmd = app.add_subcommand(
      "schedules",
      "List the schedule families (one line each), or generate one as schedule text with --dump");
  cmd->add_option(
         "--dump", args->family,
         "generate this family's schedule and print it as schedule text (" + family_names() + ")")
      ->type_name("FAMILY");
  cmd->add_option("--dp", args->dp, "data-parallel replicas")->check(CLI::Range(1, schedule::kMaxRanks));
  cmd->add_option("--pp", args->pp, "pipeline ranks")->check(CLI::Range(1, schedule::kMaxRanks));
  cmd->add_option("--tp", args->tp, "tensor-parallel ranks per stage")->check(CLI::Range(1, schedule::kMaxRanks));
  cmd->add_option("--microbatches,-m", args->microbatches,
                  "microbatches per replica per step (default: pp)")
      ->check(CLI::Range(1, schedule::kMaxRanks));
  cmd->add_option("--virtual,-v", args->virtual_stages, "model chunks per pp rank (interleaved; default 2 there, 1 elsewhere)")
      ->check(CLI::Range(1, schedule::kMaxRanks));
  cmd->add_option("--activation-bytes", args->activation_bytes,
                  "bytes each stage sends per microbatch (and receives back as gradient)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 50));
  cmd->add_option("--grad-bytes", args->gradient_bytes,
                  "bytes of each stage's gradients, all-reduced over dp")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 50));
  cmd->add_option("-o,--out", args->out, "write the schedule text to FILE (whole or not at all)")
      ->check(output_file_check())
      ->type_name("FILE");
  cmd->add_flag("--grid", args->grid,
                "print the step x rank grid (instead of the text when no --out is given)");
  cmd->callback([args] { run(*args); });
}

}  // namespace meshscope::cli
