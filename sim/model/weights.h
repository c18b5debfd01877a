// Initial parameters of a workload: full (unsplit) matrices from a fixed seed per linear, so
// every partition and every tensor-parallel split starts from the same weights as one device.
#pragma once

#include <string>
#include <vector>

#include "sim/model/workload.h"

namespace meshscope::model {

// One linear's parameters: w is in x out, row-major; b has `out` entries.
struct LinearWeights {
  std::string name;
  int in = 0;
  int out = 0;
  std::vector<float> w;
  std::vector<float> b;
};

// Linears in workload order (units in order, linears in order within a unit).
std::vector<LinearWeights> init_weights(const Workload& w);

// The tp shard `rank` of `tp` holds: column split -> columns [rank*out/tp, ...), bias likewise;
// row split -> rows [rank*in/tp, ...), full bias; replicated -> everything. Returns {w, b} with
// shapes local_in x local_out and local_out (row split: out).
LinearWeights shard(const LinearWeights& full, TpSplit split, int rank, int tp);
// Writes a shard back into the full matrices (the inverse of shard for its part).
void unshard(const LinearWeights& part, TpSplit split, int rank, int tp, LinearWeights& full);

}  // namespace meshscope::model
