// Loading the configuration and calibration files of `simulate` and `predict`.
#include "cli/sim_options.h"

#include <CLI/CLI.hpp>

#include "cli/output_path.h"
#include "sim/predict/config.h"

namespace meshscope::cli {

void add_sim_input_options(CLI::App& cmd, SimInputArgs& args, const std::string& config_help) {
  cmd.add_option("--config", args.config, config_help)->required()->check(input_path_check());
  cmd.add_option("--calibration", args.calibration, "calibration from `meshscope calibrate`")
      ->check(input_path_check());
}

SimInputs load_sim_inputs(const SimInputArgs& args) {
  SimInputs in;
  if (!args.calibration.empty()) in.calibration = cost::load_calibration(args.calibration);
  in.config = predict::load_json_file(predict::resolve_config_path(args.config));
  return in;
}

}  // namespace meshscope::cli
