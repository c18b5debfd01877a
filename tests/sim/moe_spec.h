// The small mixture-of-experts workload the model and executor tests build on: blocks of h = 8
// with 4 experts each; the rest (learning rate, seed) as WorkloadSpec has it unless a test sets it.
#pragma once

#include "sim/model/workload.h"

namespace meshscope::model::testing {

inline WorkloadSpec small_moe_spec(int layers, int batch, int top_k, double capacity_factor,
                                   int ep = 1) {
  WorkloadSpec spec;
  spec.kind = WorkloadKind::kMoe;
  spec.layers = layers;
  spec.hidden = 8;
  spec.batch = batch;
  spec.experts = 4;
  spec.top_k = top_k;
  spec.capacity_factor = capacity_factor;
  spec.ep = ep;
  return spec;
}

}  // namespace meshscope::model::testing
