// Measuring the replay cost model of an imported torch pipelining job from its labelled compute
// spans, and replaying a schedule on it with the engine.
//
// A compute action is one (stage, phase, microbatch) of one window on one device. Walking each
// device's actions in order, A then B:
//   work      B's first op to its last op (the python between its ops counts; in GPipe's ranges,
//             which hold a blocking c10d::recv_, from the first op after it). An OVERLAP_F_B
//             pair's ops interleave, so the later part's work starts where the earlier's ended.
//   host gap  from max(A's end, the end of B's producer when that ran on another device) to B's
//             first op: python and dispatch, the transfer actions between A and B, and the time
//             B's input took to come once its producer ended. B's producer: for F of stage s,
//             F of stage s − 1; for B or I of stage s, the B or I of stage s + 1 (same
//             microbatch); for a W whose I ran no ops (torch's first stage), that I's producer.
//   transfer  reported, not replayed: arrival (the end of the gloo:recv range, else of the
//             c10d::recv_ op) − max(producer's end, recv posted). The engine's sends occupy one
//             send stream in order; these delays (processes waiting for a core) do not, so the
//             replay carries them in the consumer's host gap and gives the links no latency.
//   edge      the window's time before the first op and after the last op of any rank.
// The schedule that ran replays each action with its own work + host gap, each window on its own
// (the mean of the windows' replayed steps);
// other schedules get per stage and phase the mean work and per rank the mean host gap.
#include "sim/predict/trace_replay_costs.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <tuple>

#include "sim/schedule/posted_receives.h"

namespace meshscope::predict {
namespace {

struct ComputeAction {
  int device = 0;
  int stage = 0;
  traces::Phase phase = traces::Phase::kNone;
  int32_t microbatch = 0;
  size_t window = 0;
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
};

int64_t mean(const std::vector<int64_t>& v) {
  int64_t total = 0;
  for (const int64_t x : v) total += x;
  return v.empty() ? 0 : total / static_cast<int64_t>(v.size());
}

traces::Phase phase_of(schedule::ActionKind k) {
  switch (k) {
    case schedule::ActionKind::kForward:
      return traces::Phase::kForward;
    case schedule::ActionKind::kBackward:
      return traces::Phase::kBackward;
    case schedule::ActionKind::kInputGrad:
      return traces::Phase::kInputGrad;
    case schedule::ActionKind::kWeightGrad:
      return traces::Phase::kWeightGrad;
    default:
      return traces::Phase::kOptimizer;
  }
}

bool is_backward_input(traces::Phase p) {
  return p == traces::Phase::kBackward || p == traces::Phase::kInputGrad;
}

// Each device's own step windows: its ProfilerStep#N ranges (torch.profiler's step markers, as
// the Kineto importer keeps them), sorted; empty where the device has not one per analysis window.
std::vector<std::vector<traces::Interval>> own_step_windows(const traces::Timeline& t,
                                                            const traces::TimelineAnalysis& a) {
  std::vector<std::vector<traces::Interval>> own(t.devices.size());
  for (const traces::Span& s : t.spans) {
    if (t.span_name(s).starts_with("ProfilerStep#"))
      own[s.device].push_back({s.begin_ns, s.end_ns});
  }
  for (auto& w : own) {
    std::sort(w.begin(), w.end(), [](const traces::Interval& x, const traces::Interval& y) {
      return x.begin_ns < y.begin_ns;
    });
    if (w.size() != a.windows.size()) w.clear();
  }
  return own;
}

}  // namespace

ReplayCosts measure_replay_costs(const traces::Timeline& t, const traces::TimelineAnalysis& a,
                                 const std::vector<int>& ranks) {
  ReplayCosts c;
  std::vector<bool> counted(t.devices.size(), ranks.empty());
  for (size_t d = 0; d < t.devices.size(); ++d) {
    if (std::find(ranks.begin(), ranks.end(), t.devices[d].rank) != ranks.end()) counted[d] = true;
  }
  using Key = std::tuple<int, int, traces::Phase, int32_t, size_t>;  // device, stage, phase, mb, w
  // Which step a span belongs to. The analysis windows are global (each from the earliest rank's
  // start to the latest rank's end of that step), so a rank that starts its next step before a
  // slower rank ends this one would have its first actions counted in the wrong step; each
  // device's own ProfilerStep#N ranges say which step its actions belong to, where it has one per
  // window.
  const std::vector<std::vector<traces::Interval>> device_windows = own_step_windows(t, a);
  const auto window_of = [&](const traces::Span& s) -> std::optional<size_t> {
    const std::vector<traces::Interval>& windows =
        device_windows[s.device].empty() ? a.windows : device_windows[s.device];
    const auto w =
        std::upper_bound(windows.begin(), windows.end(), s.begin_ns,
                         [](int64_t v, const traces::Interval& iv) { return v < iv.begin_ns; });
    if (w == windows.begin() || s.begin_ns >= std::prev(w)->end_ns) return std::nullopt;
    return static_cast<size_t>(w - windows.begin()) - 1;
  };
  // GPipe's "Forward i" / "Backward i" wrap a blocking c10d::recv_ after the op that allocates
  // its buffer: an action's work starts after the last recv op of its own pass.
  std::map<Key, int64_t> blocking_recv_end;
  for (const traces::Span& s : t.spans) {
    if (s.stage < 0 || s.microbatch < 0 || !counted[s.device] || t.span_name(s) != "c10d::recv_") {
      continue;
    }
    const auto w = window_of(s);
    if (!w) continue;
    int64_t& end = blocking_recv_end[{s.device, s.stage, s.phase, s.microbatch, *w}];
    end = std::max(end, s.end_ns);
  }
  std::map<Key, std::pair<int64_t, int64_t>> extent;
  for (const traces::Span& s : t.spans) {
    if (s.kind != traces::SpanKind::kCompute || s.stage < 0 || s.microbatch < 0 ||
        !counted[s.device]) {
      continue;
    }
    const auto w = window_of(s);
    if (!w) continue;
    const Key key{s.device, s.stage, s.phase, s.microbatch, *w};
    const auto recv = blocking_recv_end.find(key);
    if (recv != blocking_recv_end.end() && s.begin_ns < recv->second) continue;
    auto [it, fresh] = extent.try_emplace(key, s.begin_ns, s.end_ns);
    if (!fresh) {
      it->second.first = std::min(it->second.first, s.begin_ns);
      it->second.second = std::max(it->second.second, s.end_ns);
    }
  }
  // When each (device, stage, pass, microbatch, window)'s input arrived: the end of its gloo:recv
  // range (posted by the RECV action, ended when the data came), else of its c10d::recv_ op.
  using RecvKey = std::tuple<int, int, traces::Phase, int32_t, size_t>;
  // posted, arrived
  std::map<RecvKey, std::pair<int64_t, int64_t>> arrival[2];  // [0]: gloo:recv, [1]: c10d::recv_
  for (const traces::Span& s : t.spans) {
    if (s.stage < 0 || s.microbatch < 0 || !counted[s.device]) continue;
    const std::string_view n = t.span_name(s);
    const int record = n == "gloo:recv" ? 0 : n == "c10d::recv_" ? 1 : -1;
    if (record < 0) continue;
    const auto w = window_of(s);
    if (!w) continue;
    const RecvKey key{s.device, s.stage, s.phase, s.microbatch, *w};
    auto [at, fresh] = arrival[record].try_emplace(key, s.begin_ns, s.end_ns);
    if (!fresh) at->second.second = std::max(at->second.second, s.end_ns);
  }
  const std::map<RecvKey, std::pair<int64_t, int64_t>>& arrivals =
      arrival[0].empty() ? arrival[1] : arrival[0];
  std::vector<ComputeAction> actions;
  std::map<std::tuple<int, traces::Phase, int32_t, size_t>, size_t> by_work;  // stage, phase, mb, w
  for (const auto& [key, e] : extent) {
    const auto [device, stage, phase, mb, w] = key;
    by_work[{stage, phase, mb, w}] = actions.size();
    actions.push_back({device, stage, phase, mb, w, e.first, e.second});
    c.stage_device[stage] = device;
  }

  c.windows.resize(a.windows.size());
  int last_stage = 0;
  for (const ComputeAction& x : actions) last_stage = std::max(last_stage, x.stage);

  // Each compute action's own cost, walking each device's actions in order.
  std::map<int, std::vector<const ComputeAction*>> per_device;
  for (const ComputeAction& x : actions) per_device[x.device].push_back(&x);
  std::map<int, std::vector<int64_t>> gap_samples;     // by device
  std::map<ActionKey, std::vector<int64_t>> own_work;  // over windows
  std::map<ActionKey, std::vector<int64_t>> own_gap;
  std::map<ActionKey, std::vector<int64_t>> own_transfer;
  std::vector<int64_t> transfers;
  for (auto& [device, list] : per_device) {
    std::sort(list.begin(), list.end(), [](const ComputeAction* x, const ComputeAction* y) {
      return x->begin_ns < y->begin_ns;
    });
    for (size_t i = 0; i < list.size(); ++i) {
      const ComputeAction& next = *list[i];
      const ComputeAction* prev =
          i > 0 && list[i - 1]->window == next.window ? list[i - 1] : nullptr;
      const ComputeAction* producer = nullptr;
      int from_stage = -1;
      traces::Phase from_phase = traces::Phase::kNone;
      if (next.phase == traces::Phase::kForward && next.stage > 0) {
        from_stage = next.stage - 1;
        from_phase = traces::Phase::kForward;
      } else if (is_backward_input(next.phase) && next.stage < last_stage) {
        from_stage = next.stage + 1;
        from_phase = traces::Phase::kBackward;
      } else if (next.phase == traces::Phase::kWeightGrad && next.stage < last_stage &&
                 !by_work.count(
                     {next.stage, traces::Phase::kInputGrad, next.microbatch, next.window})) {
        // Its I ran no ops (torch's first stage computes no input gradient), so the wait for
        // the I's input shows before the W.
        from_stage = next.stage + 1;
        from_phase = traces::Phase::kBackward;
      }
      if (from_stage >= 0) {
        for (const traces::Phase p :
             {from_phase,
              from_phase == traces::Phase::kBackward ? traces::Phase::kInputGrad : from_phase}) {
          const auto it = by_work.find({from_stage, p, next.microbatch, next.window});
          if (it != by_work.end()) producer = &actions[it->second];
        }
      }
      // An OVERLAP_F_B pair's ops interleave: the later part's work starts where the earlier's
      // ended.
      const int64_t begin = prev ? std::max(next.begin_ns, prev->end_ns) : next.begin_ns;
      const ActionKey key{next.stage, next.phase, next.microbatch};
      own_work[key].push_back(std::max<int64_t>(0, next.end_ns - begin));
      ReplayCosts::Window& in_window = c.windows[next.window];
      in_window.work_ns[key] = own_work[key].back();
      in_window.measured = true;
      int64_t base = prev ? prev->end_ns : next.begin_ns;  // a device's first action: no gap
      if (producer != nullptr && producer->device != device) {
        const auto at =
            arrivals.find({device, next.stage, from_phase, next.microbatch, next.window});
        // Without a recorded arrival: the producer's end stands for it.
        const int64_t arrived = at != arrivals.end() ? at->second.second : producer->end_ns;
        // The data can arrive only once it was sent and the recv was posted.
        const int64_t ready =
            std::max(producer->end_ns, at != arrivals.end() ? at->second.first : producer->end_ns);
        transfers.push_back(std::max<int64_t>(0, arrived - ready));
        own_transfer[{next.stage, from_phase, next.microbatch}].push_back(transfers.back());
        if (!prev || arrived > base) ++c.latency_samples;  // it waited for its input
        // The replay passes no latency to the engine for these transfers (its sends occupy a
        // send stream in order, these delays do not): the wait for the input after the producer
        // ended is part of the consumer's gap.
        base = prev ? std::max(base, producer->end_ns) : std::min(producer->end_ns, next.begin_ns);
      }
      const int64_t gap = std::max<int64_t>(0, begin - base);
      own_gap[key].push_back(gap);
      in_window.gap_ns[key] = gap;
      if (prev) gap_samples[device].push_back(gap);
    }
  }
  for (const auto& [key, v] : own_work) c.action_work_ns[key] = mean(v);
  for (const auto& [key, v] : own_gap) c.action_gap_ns[key] = mean(v);
  for (const auto& [key, v] : own_transfer) c.transfer_ns[key] = mean(v);
  int64_t gap_total = 0;
  for (const auto& [device, v] : gap_samples) {
    c.host_gap_ns[device] = mean(v);
    gap_total += c.host_gap_ns[device];
    c.gap_samples += v.size();
  }
  c.mean_host_gap_ns =
      c.host_gap_ns.empty() ? 0 : gap_total / static_cast<int64_t>(c.host_gap_ns.size());
  c.latency_ns = mean(transfers);

  // Work per stage and phase: the mean over its actions.
  std::map<std::pair<int, traces::Phase>, std::pair<int64_t, int64_t>> sum;  // total, count
  for (const auto& [key, work] : c.action_work_ns) {
    auto& [total, count] = sum[{std::get<0>(key), std::get<1>(key)}];
    total += work;
    ++count;
  }
  for (const auto& [key, tc] : sum) {
    const int64_t per = tc.first / tc.second;
    engine::StageTiming& st = c.stages[key.first];
    switch (key.second) {
      case traces::Phase::kForward:
        st.forward_ns = per;
        break;
      case traces::Phase::kBackward:
        st.backward_ns = per;
        break;
      case traces::Phase::kInputGrad:
        st.input_grad_ns = per;
        break;
      case traces::Phase::kWeightGrad:
        st.weight_grad_ns = per;
        break;
      default:
        break;
    }
  }
  for (auto& [stage, st] : c.stages) {
    // A stage measured with B only gets I = W = B / 2 for schedules that split it (assumption:
    // the even split of Qi et al. 2023, "Zero Bubble Pipeline Parallelism", whose ZB schedules
    // take T_F = T_B = T_W); one measured with I and W gets B = I + W.
    if (st.backward_ns == 0) st.backward_ns = st.input_grad_ns + st.weight_grad_ns;
    if (st.input_grad_ns == 0 && st.weight_grad_ns == 0) {
      st.input_grad_ns = st.backward_ns / 2;
      st.weight_grad_ns = st.backward_ns - st.input_grad_ns;
    }
    c.total[static_cast<size_t>(traces::Phase::kForward)] += st.forward_ns;
    c.total[static_cast<size_t>(traces::Phase::kBackward)] += st.backward_ns;
    c.total[static_cast<size_t>(traces::Phase::kInputGrad)] += st.input_grad_ns;
    c.total[static_cast<size_t>(traces::Phase::kWeightGrad)] += st.weight_grad_ns;
  }

  // The step outside the pipeline, per window.
  std::vector<std::pair<int64_t, int64_t>> first_last(a.windows.size(), {INT64_MAX, INT64_MIN});
  for (const ComputeAction& x : actions) {
    first_last[x.window].first = std::min(first_last[x.window].first, x.begin_ns);
    first_last[x.window].second = std::max(first_last[x.window].second, x.end_ns);
  }
  int64_t edge_total = 0, edge_windows = 0;
  for (size_t w = 0; w < a.windows.size(); ++w) {
    if (first_last[w].first > first_last[w].second) continue;
    c.windows[w].edge_ns = (first_last[w].first - a.windows[w].begin_ns) +
                           (a.windows[w].end_ns - first_last[w].second);
    edge_total += c.windows[w].edge_ns;
    ++edge_windows;
  }
  c.edge_ns = edge_windows > 0 ? edge_total / edge_windows : 0;
  return c;
}

std::vector<engine::StageTiming> replay_stage_timings(const ReplayCosts& c, int num_stages,
                                                      const std::vector<int>& stage_owner,
                                                      bool same_stages, bool same_ranks,
                                                      const ReplayTerms& terms) {
  std::vector<engine::StageTiming> out(static_cast<size_t>(num_stages));
  for (int k = 0; k < num_stages; ++k) {
    engine::StageTiming& st = out[static_cast<size_t>(k)];
    const auto own = c.stages.find(k);
    if (same_stages && own != c.stages.end()) {
      st = own->second;
    } else {
      const auto spread = [&](traces::Phase p) {
        return c.total[static_cast<size_t>(p)] / std::max(1, num_stages);
      };
      st.forward_ns = spread(traces::Phase::kForward);
      st.backward_ns = spread(traces::Phase::kBackward);
      st.input_grad_ns = spread(traces::Phase::kInputGrad);
      st.weight_grad_ns = spread(traces::Phase::kWeightGrad);
    }
    if (!terms.host_gap) continue;
    int64_t gap = c.mean_host_gap_ns;
    if (same_ranks && k < static_cast<int>(stage_owner.size())) {
      const auto dev = c.stage_device.find(stage_owner[static_cast<size_t>(k)]);
      if (dev != c.stage_device.end()) {
        const auto g = c.host_gap_ns.find(dev->second);
        if (g != c.host_gap_ns.end()) gap = g->second;
      }
    }
    st.forward_ns += gap;
    st.backward_ns += gap;
    st.input_grad_ns += gap;
    st.weight_grad_ns += gap;
  }
  return out;
}

engine::EngineResult replay_engine(const schedule::Schedule& original, const ReplayCosts& c,
                                   const ReplayOptions& o, bool build_timeline,
                                   std::optional<size_t> window) {
  const schedule::Schedule s = schedule::receives_where_needed(original);
  engine::EngineInput in;
  in.schedule = &s;
  in.stages =
      replay_stage_timings(c, s.num_stages, s.stage_owner, o.same_stages, o.same_ranks, o.terms);
  // The waits for inputs are in the host gaps (measure_replay_costs), not on the links.
  in.links = {engine::LinkSpec{1e18, 0}};
  if (o.per_action) {
    const std::map<ActionKey, int64_t>& work =
        window ? c.windows.at(*window).work_ns : c.action_work_ns;
    const std::map<ActionKey, int64_t>& gaps =
        window ? c.windows.at(*window).gap_ns : c.action_gap_ns;
    in.compute_action_ns = [&work, &gaps, &o](int, const schedule::Action& a) -> int64_t {
      const ActionKey key{a.stage, phase_of(a.kind), a.microbatch};
      const auto w = work.find(key);
      const auto g = gaps.find(key);
      return (w == work.end() ? 0 : w->second) +
             (o.terms.host_gap && g != gaps.end() ? g->second : 0);
    };
  }
  in.build_timeline = build_timeline;
  return engine::simulate(in);
}

int64_t replay_step(const schedule::Schedule& s, const ReplayCosts& c, const ReplayOptions& o) {
  if (o.per_action) {
    int64_t total = 0, replayed = 0;
    for (size_t w = 0; w < c.windows.size(); ++w) {
      if (!c.windows[w].measured) continue;
      total +=
          replay_engine(s, c, o, false, w).step_time_ns + (o.terms.edge ? c.windows[w].edge_ns : 0);
      ++replayed;
    }
    if (replayed > 0) return total / replayed;
  }
  return replay_engine(s, c, o, false).step_time_ns + (o.terms.edge ? c.edge_ns : 0);
}

}  // namespace meshscope::predict
