// The flags `run` and `demo` share: the workload (--model, --layers, --hidden, --batch, --lr,
// --seed, and the moe model's --experts, --top-k, --capacity-factor, --ep) and --backend.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "profiler/runtime/backend.h"
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
  // Whether a flag was given on the command line (add_workload_options sets it): to_spec refuses
  // the flags the chosen model has no use for instead of ignoring them.
  std::function<bool(const char*)> given;

  // Throws UserError naming the flag for an unknown model, or for a flag the model has no use for
  // (--experts with the mlp model); model::make_workload checks the sizes, rank_plan.h's
  // check_expert_parallel --ep against --dp.
  model::WorkloadSpec to_spec() const;
};

void add_workload_options(CLI::App& cmd, WorkloadArgs& args);

// --backend,-b, its help listing every backend of profiler/runtime/backend_table.h.
void add_backend_option(CLI::App& cmd, std::string& backend);
// The backend named by --backend; UserError listing the names for an unknown one.
runtime::BackendKind parse_backend_option(const std::string& backend);

// "2.3051 -> 2.2874"
std::string format_losses(const std::vector<double>& losses);

}  // namespace meshscope::cli
