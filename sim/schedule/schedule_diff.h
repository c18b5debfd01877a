// A readable difference between two schedules: differing header fields, then for each rank whose
// program differs, the first step where it does. Used by tests and `meshscope validate --diff`.
#pragma once

#include <string>
#include <string_view>

#include "sim/schedule/schedule.h"

namespace meshscope::schedule {

// One line per difference, e.g.
//   mesh: dp=1 pp=4 tp=1 (a) vs dp=2 pp=4 tp=1 (b)
//   rank 1 step 3: 1F2 (a) vs 1B0 (b); 40 vs 40 actions
//   rank 2 step 38: ends (a) vs 2STEP (b); 38 vs 39 actions
//   rank 5: only in b (40 actions)
// Empty when the schedules are equal.
std::string diff(const Schedule& a, const Schedule& b, std::string_view a_name = "a",
                 std::string_view b_name = "b");

}  // namespace meshscope::schedule
