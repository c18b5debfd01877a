// Splitting a workload's units into contiguous, balanced pipeline stages.
#pragma once

#include <vector>

namespace meshscope::model {

struct StageRange {
  int first_unit = 0;  // units [first_unit, end_unit)
  int end_unit = 0;
  int size() const { return end_unit - first_unit; }
};

// `stages` contiguous ranges over `units` units whose sizes differ by at most one (the earlier
// stages take the extra unit: the last stage also computes the loss). Throws
// std::invalid_argument when stages < 1 or stages > units.
std::vector<StageRange> partition_units(int units, int stages);

}  // namespace meshscope::model
