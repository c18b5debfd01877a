// The workload flags `run` and `demo` share (--model, --layers, --hidden, --batch, --lr, --seed,
// and the moe model's --experts, --top-k, --capacity-factor, --ep).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/model/workload.h"

namespace CLI {
class App;
}

namespace meshscope::cli {

struct WorkloadArgs {
  std::string model = "mlp";
  int layers = 8;
  int hidden = 256;
  int batch = 32;
  float lr = 0.05f;
  uint64_t seed = 1;
  bool data_gradient = false;
  int experts = 4;
  int top_k = 1;
  double capacity_factor = 1.0;
  int ep = 1;

  // Throws UserError naming the flag for an unknown model (model::make_workload checks the
  // sizes, rank_plan.h's check_expert_parallel --ep against --dp).
  model::WorkloadSpec to_spec() const;
};

void add_workload_options(CLI::App& cmd, WorkloadArgs& args);

// "2.3051 -> 2.2874"
std::string format_losses(const std::vector<double>& losses);

}  // namespace meshscope::cli
