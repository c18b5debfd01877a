// A Schedule: for every rank of a mesh, the ordered actions it runs in one training step.
// Generators write it, the validator checks it, the executor and the simulator run it.
#pragma once

#include <string>
#include <vector>

#include "sim/mesh/mesh.h"
#include "sim/schedule/action.h"
#include "sim/schedule/marker.h"

namespace meshscope::schedule {

struct Schedule {
  std::string name;  // family that made it: "naive", "gpipe", "1f1b", "interleaved", "zb-h1", ...
  mesh::MeshShape mesh;
  int num_stages = 1;        // pipeline stages (model chunks) in total: pp x virtual stages
  int num_microbatches = 1;  // per data-parallel replica per step
  // stage_owner[s] = the pp coordinate that holds stage s (interleaved: s % pp).
  std::vector<int> stage_owner;
  // ranks[r] = the actions of global rank r (see mesh::Mesh for rank order), in program order.
  std::vector<std::vector<Action>> ranks;
  // Kept torch markers (marker.h) of each rank, sorted by `before`: empty, or one list per rank.
  // The validator, executors and simulator do not look at them; the schedule text and torch's CSV
  // write them back where they were.
  std::vector<std::vector<Marker>> markers;

  int virtual_stages() const { return mesh.pp > 0 ? num_stages / mesh.pp : 0; }
};

}  // namespace meshscope::schedule
