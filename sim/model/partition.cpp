// Balanced contiguous partition of units into stages.
#include "sim/model/partition.h"

#include <stdexcept>
#include <string>

namespace meshscope::model {

std::vector<StageRange> partition_units(int units, int stages) {
  if (stages < 1 || stages > units) {
    throw std::invalid_argument("partition: cannot split " + std::to_string(units) +
                                " layers into " + std::to_string(stages) +
                                " stages (need 1 <= stages <= layers)");
  }
  std::vector<StageRange> out;
  const int base = units / stages, extra = units % stages;
  int begin = 0;
  for (int s = 0; s < stages; ++s) {
    const int n = base + (s < extra ? 1 : 0);
    out.push_back({begin, begin + n});
    begin += n;
  }
  return out;
}

}  // namespace meshscope::model
