// Matches two runs' devices (by mesh place where both runs have one, else by rank) and lines up
// their time axes at the first step.
#include "gui/view/compare_model.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace meshscope::gui {

CompareModel compare_runs(const traces::Timeline& a, const traces::TimelineAnalysis& analysis_a,
                          const traces::Timeline& b, const traces::TimelineAnalysis& analysis_b) {
  CompareModel m;
  m.step_a_ns = analysis_a.step_time_ns;
  m.step_b_ns = analysis_b.step_time_ns;
  m.bubble_a = analysis_a.bubble_fraction;
  m.bubble_b = analysis_b.bubble_fraction;
  const int64_t start_a =
      analysis_a.windows.empty() ? a.extent().begin_ns : analysis_a.windows.front().begin_ns;
  const int64_t start_b =
      analysis_b.windows.empty() ? b.extent().begin_ns : analysis_b.windows.front().begin_ns;
  m.b_to_a_shift_ns = start_a - start_b;

  // Per step: each run's totals over its own number of step windows.
  const auto steps = [](const traces::TimelineAnalysis& x) {
    return std::max<int64_t>(1, static_cast<int64_t>(x.windows.size()));
  };
  const int64_t steps_a = steps(analysis_a), steps_b = steps(analysis_b);
  // Two meshes (a measured pp 2 run beside a simulated pp 8 x tp 8 one): stage 1 is rank 1 in one
  // and rank 8 in the other, so devices pair by their (dp, pp, tp) place when every device of
  // both runs has one, and the rows follow the places' order.
  const auto placed = [](const traces::TimelineAnalysis& x) {
    return !x.devices.empty() &&
           std::all_of(x.devices.begin(), x.devices.end(), [](const traces::DeviceAnalysis& d) {
             return d.coord.dp >= 0 && d.coord.pp >= 0 && d.coord.tp >= 0;
           });
  };
  m.matched_by_place = placed(analysis_a) && placed(analysis_b);
  using Key = std::tuple<int, int, int, int>;
  const auto key = [&](const traces::DeviceAnalysis& d) {
    return m.matched_by_place ? Key{d.coord.dp, d.coord.pp, d.coord.tp, 0} : Key{0, 0, 0, d.rank};
  };
  std::map<Key, DeviceDiff> rows;
  for (const traces::DeviceAnalysis& d : analysis_a.devices) {
    DeviceDiff& diff = rows[key(d)];
    diff.rank = d.rank;
    diff.name = d.name;
    diff.device_a = d.device;
    diff.busy_a_ns = d.busy_ns / steps_a;
    diff.comm_a_ns = d.communication_ns / steps_a;
    diff.idle_a_ns = d.idle_ns / steps_a;
    diff.bubble_a = d.bubble_fraction;
  }
  for (const traces::DeviceAnalysis& d : analysis_b.devices) {
    DeviceDiff& diff = rows[key(d)];
    if (!diff.device_a) diff.rank = d.rank;
    if (diff.name.empty()) diff.name = d.name;
    diff.name_b = d.name;
    diff.device_b = d.device;
    diff.busy_b_ns = d.busy_ns / steps_b;
    diff.comm_b_ns = d.communication_ns / steps_b;
    diff.idle_b_ns = d.idle_ns / steps_b;
    diff.bubble_b = d.bubble_fraction;
  }
  for (auto& [rank, diff] : rows) m.devices.push_back(std::move(diff));
  return m;
}

}  // namespace meshscope::gui
