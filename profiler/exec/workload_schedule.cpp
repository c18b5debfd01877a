// Sizing a generated schedule from its workload (see workload_schedule.h).
#include "profiler/exec/workload_schedule.h"

#include "sim/model/partition.h"
#include "sim/model/workload_cost.h"

namespace meshscope::exec {

schedule::Schedule generate_for_workload(const schedule::GeneratorConfig& config,
                                         const model::WorkloadSpec& workload_spec) {
  schedule::check_config(config);
  const model::Workload workload = model::make_workload(workload_spec);
  model::check_tp(workload, config.mesh.tp);
  const int stages = config.mesh.pp * config.virtual_stages;
  const int rows = model::microbatch_rows(workload_spec.batch, config.mesh.dp, config.microbatches);
  const auto ranges = model::partition_units(static_cast<int>(workload.units.size()), stages);
  const auto costs = model::stage_costs(workload, ranges, config.mesh.tp, rows);
  schedule::GeneratorConfig sized = config;
  sized.activation_bytes.clear();
  sized.gradient_bytes.clear();
  for (const model::StageCost& c : costs) {
    sized.activation_bytes.push_back(c.output_bytes);
    sized.gradient_bytes.push_back(model::dp_reduced_parameters(c, workload_spec.ep) *
                                   static_cast<int64_t>(sizeof(float)));
  }
  return schedule::generate(sized);
}

}  // namespace meshscope::exec
