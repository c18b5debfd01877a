// Means per stage and kind, the engine input built from them, and the analysed replay.
#include "sim/predict/measured_replay.h"

#include <stdexcept>
#include <string>

#include "traces/analysis.h"

namespace meshscope::predict {

using schedule::ActionKind;

MeasuredCosts mean_costs(const schedule::Schedule& s,
                         const std::vector<std::vector<int64_t>>& action_ns) {
  if (action_ns.size() != s.ranks.size()) {
    throw std::invalid_argument("replay: costs for " + std::to_string(action_ns.size()) +
                                " ranks, the schedule has " + std::to_string(s.ranks.size()));
  }
  constexpr size_t kinds = static_cast<size_t>(ActionKind::kCount);
  std::vector<std::array<int64_t, kinds>> sum(static_cast<size_t>(s.num_stages));
  std::vector<std::array<int64_t, kinds>> count(sum.size());
  for (auto& a : sum) a.fill(0);
  for (auto& a : count) a.fill(0);
  int64_t send_sum = 0, send_count = 0, recv_sum = 0, recv_count = 0;
  for (size_t r = 0; r < s.ranks.size(); ++r) {
    if (action_ns[r].size() != s.ranks[r].size()) {
      throw std::invalid_argument("replay: rank " + std::to_string(r) + " has costs for " +
                                  std::to_string(action_ns[r].size()) + " actions, its program " +
                                  std::to_string(s.ranks[r].size()));
    }
    for (size_t i = 0; i < s.ranks[r].size(); ++i) {
      const schedule::Action& a = s.ranks[r][i];
      const int64_t ns = action_ns[r][i];
      if (ns < 0 || a.stage < 0 || a.stage >= s.num_stages) {
        throw std::invalid_argument("replay: rank " + std::to_string(r) + " action " +
                                    std::to_string(i) + " has cost " + std::to_string(ns) +
                                    " ns at stage " + std::to_string(a.stage));
      }
      sum[static_cast<size_t>(a.stage)][static_cast<size_t>(a.kind)] += ns;
      ++count[static_cast<size_t>(a.stage)][static_cast<size_t>(a.kind)];
      if (schedule::is_send(a.kind)) {
        send_sum += ns;
        ++send_count;
      } else if (schedule::is_recv(a.kind)) {
        recv_sum += ns;
        ++recv_count;
      }
    }
  }
  MeasuredCosts c;
  c.mean_ns.resize(sum.size());
  for (size_t st = 0; st < sum.size(); ++st) {
    for (size_t k = 0; k < kinds; ++k) {
      c.mean_ns[st][k] = count[st][k] > 0 ? sum[st][k] / count[st][k] : 0;
    }
  }
  c.transfer_ns =
      (send_count > 0 ? send_sum / send_count : 0) + (recv_count > 0 ? recv_sum / recv_count : 0);
  return c;
}

engine::EngineInput replay_input(const schedule::Schedule& s, const MeasuredCosts& c) {
  engine::EngineInput in;
  in.schedule = &s;
  in.stages.resize(static_cast<size_t>(s.num_stages));
  for (int st = 0; st < s.num_stages; ++st) {
    engine::StageTiming& t = in.stages[static_cast<size_t>(st)];
    t.forward_ns = c.of(st, ActionKind::kForward);
    t.input_grad_ns = c.of(st, ActionKind::kInputGrad);
    t.weight_grad_ns = c.of(st, ActionKind::kWeightGrad);
    t.backward_ns = c.of(st, ActionKind::kBackward);
    if (t.backward_ns == 0) t.backward_ns = t.input_grad_ns + t.weight_grad_ns;
    t.optimizer_ns = c.of(st, ActionKind::kOptimizerStep);
  }
  // Unbounded bandwidth: the measured copy time is the whole transfer (latency_ns).
  in.links = {engine::LinkSpec{1e18, c.transfer_ns}};
  in.collective_ns = [&c](int, const schedule::Action& a) { return c.of(a.stage, a.kind); };
  in.shared_processors = 0;
  in.build_timeline = true;
  in.source = "replay";
  return in;
}

MeasuredReplay replay_measured(const schedule::Schedule& s,
                               const std::vector<std::vector<int64_t>>& action_ns) {
  const MeasuredCosts costs = mean_costs(s, action_ns);
  engine::EngineResult result = engine::simulate(replay_input(s, costs));
  const traces::TimelineAnalysis a = traces::analyze(result.timeline);
  MeasuredReplay out;
  out.step_ns = a.step_time_ns;
  out.bubble_fraction = a.bubble_fraction;
  for (const auto& d : a.devices) out.device_bubbles.push_back(d.bubble_fraction);
  out.transfer_ns = costs.transfer_ns;
  out.timeline = std::move(result.timeline);
  return out;
}

}  // namespace meshscope::predict
