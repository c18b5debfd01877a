// ZeRO in a generated schedule and in the stage times: dp gradient all-reduces rewritten into
// reduce-scatters (once a step under ZeRO-1, after each microbatch's backward under ZeRO-2 and 3)
// and all-gathers, and ZeRO-3's copy passes over the unsharded parameters.
#include "sim/predict/zero.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace meshscope::predict {

void apply_zero(schedule::Schedule& s, int zero, int dp, const std::vector<int64_t>& param_bytes,
                const std::vector<int64_t>& grad_bytes, int shard_group, bool once_a_step, int cp) {
  using schedule::Action;
  using schedule::ActionKind;
  if (zero <= 0 || dp <= 1) return;
  const bool hybrid = zero >= 3 && shard_group > 0 && shard_group * cp < dp;
  const bool per_microbatch = zero >= 3 && !once_a_step;
  auto collective = [](ActionKind k, int stage, int64_t bytes) {
    Action a;
    a.kind = k;
    a.group = mesh::GroupKind::kDp;
    a.stage = stage;
    a.bytes = bytes;
    return a;
  };
  auto is_backward = [](ActionKind k) {
    return k == ActionKind::kBackward || k == ActionKind::kWeightGrad;
  };
  for (auto& acts : s.ranks) {
    // Once a step: each stage's first forward and last backward on this rank.
    std::map<int, size_t> first_forward, last_backward;
    if (zero >= 3 && once_a_step) {
      for (size_t i = 0; i < acts.size(); ++i) {
        if (acts[i].kind == ActionKind::kForward) first_forward.emplace(acts[i].stage, i);
        if (is_backward(acts[i].kind)) last_backward[acts[i].stage] = i;
      }
    }
    std::vector<Action> out;
    out.reserve(acts.size() * (per_microbatch ? 4 : 1) + 4);
    std::vector<size_t> group;  // the actions since the last that ends an OVERLAP_F_B group
    for (size_t i = 0; i < acts.size(); ++i) {
      const Action& a = acts[i];
      const int64_t pb = param_bytes.at(a.stage);
      if (a.kind == ActionKind::kAllReduce && a.group == mesh::GroupKind::kDp) {
        if (zero < 2) out.push_back(collective(ActionKind::kReduceScatter, a.stage, a.bytes));
        continue;  // ZeRO-2 and 3 reduced the gradients after the backward already
      }
      const auto first = first_forward.find(a.stage);
      const bool gather =
          per_microbatch ? (a.kind == ActionKind::kForward || a.kind == ActionKind::kBackward ||
                            a.kind == ActionKind::kInputGrad)
                         : first != first_forward.end() && first->second == i;
      if (gather) {
        // Issued ahead of the receives that feed the compute (a prefetch): a RECV holds the
        // program until its send has run, and the gather need not wait for that. An OVERLAP_F_B
        // group is one action (Action::overlap_next), its receives all before it: a gather for
        // a later member goes before the group's first.
        auto at = out.end();
        while (at != out.begin() && (at - 1)->overlap_next) --at;
        while (at != out.begin() && schedule::is_recv((at - 1)->kind)) --at;
        out.insert(at, collective(ActionKind::kAllGather, a.stage, pb));
      }
      out.push_back(a);
      // Sharded gradients are reduced as each microbatch's backward makes them: a GPU keeping
      // only its shard between microbatches cannot wait for the step's end (DeepSpeed's stage 2,
      // FSDP without no_sync; docs/ACCURACY.md item 43). Once a step: after the stage's last.
      // Those of an OVERLAP_F_B group's members follow the group, not one inside it.
      group.push_back(i);
      if (a.overlap_next) continue;
      for (size_t m : group) {
        const Action& b = acts[m];
        const auto last = last_backward.find(b.stage);
        const bool reduce =
            zero >= 2 && is_backward(b.kind) &&
            (zero < 3 || per_microbatch || (last != last_backward.end() && last->second == m));
        if (!reduce) continue;
        const int64_t bytes = grad_bytes.at(b.stage);
        out.push_back(collective(ActionKind::kReduceScatter, b.stage, bytes));
        if (hybrid)
          out.push_back(collective(ActionKind::kAllReduce, b.stage, bytes / (shard_group * cp)));
      }
      group.clear();
      if (zero < 3 && a.kind == ActionKind::kOptimizerStep)
        out.push_back(collective(ActionKind::kAllGather, a.stage, pb));
    }
    acts = std::move(out);
  }
}

bool shards_once_a_step(int zero, int dp, int pp, const cost::Framework& framework) {
  return zero >= 3 && dp > 1 && pp > 1 && framework.pipelined_sharding_per_step;
}

double zero3_collective_seconds(const cost::Hardware& hw, cost::CollectiveKind kind, double bytes,
                                const cost::GroupSpan& span, int layers,
                                const cost::Calibration* calibration) {
  const int n = std::max(1, layers);
  return n * cost::collective_time(hw, kind, bytes / n, span, calibration).seconds;
}

ShardedCopies sharded_copies(int zero, int dp, double parameters, const cost::Framework& framework,
                             const cost::ComputeModel& compute, int once_over) {
  if (zero < 3 || dp <= 1 || parameters <= 0) return {};
  auto ns = [](double seconds) { return static_cast<int64_t>(std::llround(seconds * 1e9)); };
  const int64_t gather = ns(compute.stream_seconds(parameters * framework.gather_copy_bytes));
  const int64_t reduce = ns(compute.stream_seconds(parameters * framework.reduce_copy_bytes));
  if (once_over > 0) return {gather / once_over, 0, reduce / once_over};
  return {gather, gather, reduce};
}

WeightCasts weight_casts(double parameters, const cost::Framework& framework,
                         const cost::ComputeModel& compute) {
  if (parameters <= 0) return {};
  auto ns = [](double seconds) { return static_cast<int64_t>(std::llround(seconds * 1e9)); };
  return {ns(compute.stream_seconds(parameters * framework.cast_forward_bytes)),
          ns(compute.stream_seconds(parameters * framework.cast_backward_bytes))};
}

int64_t grad_accumulation_ns(double parameters, const cost::Framework& framework,
                             cost::Precision precision, const cost::ComputeModel& compute) {
  const double bytes = framework.grad_accumulation.at(precision);
  if (parameters <= 0 || bytes <= 0) return 0;
  return static_cast<int64_t>(std::llround(compute.stream_seconds(parameters * bytes) * 1e9));
}

void add_parameter_passes(engine::StageTiming& t, int zero, int dp, double parameters,
                          cost::Precision precision, const cost::Framework& framework,
                          const cost::ComputeModel& compute, int once_over) {
  const ShardedCopies c = sharded_copies(zero, dp, parameters, framework, compute, once_over);
  const WeightCasts w = weight_casts(parameters, framework, compute);
  const int64_t accumulate = grad_accumulation_ns(parameters, framework, precision, compute);
  t.forward_ns += c.gather_ns + w.forward_ns;
  t.input_grad_ns += c.backward_gather_ns;  // the backward's gather, before the input gradients
  // The reduction, the gradient's cast and its accumulation start once the weight gradients exist.
  t.weight_grad_ns += c.reduce_ns + w.backward_ns + accumulate;
  t.backward_ns += c.backward_gather_ns + c.reduce_ns + w.backward_ns + accumulate;
}

}  // namespace meshscope::predict
