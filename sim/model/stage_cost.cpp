// Sums over a stage's ops.
#include "sim/model/stage_cost.h"

namespace meshscope::model {

double total_flops(const std::vector<OpCost>& ops) {
  double f = 0;
  for (const OpCost& op : ops) f += op.flops;
  return f;
}

double total_bytes(const std::vector<OpCost>& ops) {
  double b = 0;
  for (const OpCost& op : ops) b += op.bytes;
  return b;
}

double StageCost::forward_flops() const { return total_flops(forward); }
double StageCost::input_grad_flops() const { return total_flops(input_grad); }
double StageCost::weight_grad_flops() const { return total_flops(weight_grad); }

}  // namespace meshscope::model
