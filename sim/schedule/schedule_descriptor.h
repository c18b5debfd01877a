// The schedule's part of a Timeline's run descriptor (mesh, family, microbatches, chunks): the
// executor and the simulator describe the schedule they ran the same way.
#pragma once

#include "sim/schedule/families.h"
#include "sim/schedule/schedule.h"
#include "traces/run_descriptor.h"

namespace meshscope::schedule {

// Fills the schedule fields of `run` (the others stay as they are).
inline void describe_schedule(const Schedule& s, traces::RunDescriptor& run) {
  run.mesh = traces::MeshExtent{s.mesh.dp, s.mesh.pp, s.mesh.tp};
  run.schedule = s.name;
  const auto family = parse_family(s.name);
  run.family = family ? std::string(name(*family)) : std::string();
  run.microbatches = s.num_microbatches;
  run.stages = s.num_stages;
  run.virtual_stages = s.virtual_stages();
}

}  // namespace meshscope::schedule
