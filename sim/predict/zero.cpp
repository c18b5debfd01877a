// ZeRO in a generated schedule and in the stage times: dp gradient all-reduces rewritten into
// reduce-scatters (once a step under ZeRO-1, after each microbatch's backward under ZeRO-2 and 3)
// and all-gathers, and ZeRO-3's copy passes over the unsharded parameters.
#include "sim/predict/zero.h"

#include <algorithm>
#include <cmath>

namespace meshscope::predict {

void apply_zero(schedule::Schedule& s, int zero, int dp, const std::vector<int64_t>& param_bytes,
                int shard_group) {
  using schedule::Action;
  using schedule::ActionKind;
  if (zero <= 0 || dp <= 1) return;
  const bool hybrid = zero >= 3 && shard_group > 0 && shard_group < dp;
  auto collective = [](ActionKind k, int stage, int64_t bytes) {
    Action a;
    a.kind = k;
    a.group = mesh::GroupKind::kDp;
    a.stage = stage;
    a.bytes = bytes;
    return a;
  };
  for (auto& acts : s.ranks) {
    std::vector<Action> out;
    out.reserve(acts.size() * (zero >= 3 ? 4 : 1) + 4);
    for (const Action& a : acts) {
      const int64_t pb = param_bytes.at(a.stage);
      if (a.kind == ActionKind::kAllReduce && a.group == mesh::GroupKind::kDp) {
        if (zero < 2) out.push_back(collective(ActionKind::kReduceScatter, a.stage, a.bytes));
        continue;  // ZeRO-2 and 3 reduced each microbatch's gradients already
      }
      if (zero >= 3 && (a.kind == ActionKind::kForward || a.kind == ActionKind::kBackward ||
                        a.kind == ActionKind::kInputGrad)) {
        // Issued ahead of the receives that feed the compute (a prefetch): a RECV holds the
        // program until its send has run, and the gather need not wait for that.
        auto at = out.end();
        while (at != out.begin() && schedule::is_recv((at - 1)->kind)) --at;
        out.insert(at, collective(ActionKind::kAllGather, a.stage, pb));
      }
      out.push_back(a);
      // Sharded gradients are reduced as each microbatch's backward makes them: a GPU keeping
      // only its shard between microbatches cannot wait for the step's end (DeepSpeed's stage 2,
      // FSDP without no_sync; docs/ACCURACY.md item 43).
      if (zero >= 2 && (a.kind == ActionKind::kBackward || a.kind == ActionKind::kWeightGrad)) {
        out.push_back(collective(ActionKind::kReduceScatter, a.stage, pb));
        if (hybrid) out.push_back(collective(ActionKind::kAllReduce, a.stage, pb / shard_group));
      }
      if (zero < 3 && a.kind == ActionKind::kOptimizerStep)
        out.push_back(collective(ActionKind::kAllGather, a.stage, pb));
    }
    acts = std::move(out);
  }
}

double zero3_collective_seconds(const cost::Hardware& hw, cost::CollectiveKind kind, double bytes,
                                const cost::GroupSpan& span, int layers,
                                const cost::Calibration* calibration) {
  const int n = std::max(1, layers);
  return n * cost::collective_time(hw, kind, bytes / n, span, calibration).seconds;
}

ShardedCopies sharded_copies(int zero, int dp, double parameters, const cost::Framework& framework,
                             const cost::ComputeModel& compute) {
  if (zero < 3 || dp <= 1 || parameters <= 0) return {};
  auto ns = [](double seconds) { return static_cast<int64_t>(std::llround(seconds * 1e9)); };
  return {ns(compute.stream_seconds(parameters * framework.gather_copy_bytes)),
          ns(compute.stream_seconds(parameters * framework.reduce_copy_bytes))};
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
                          const cost::ComputeModel& compute) {
  const ShardedCopies c = sharded_copies(zero, dp, parameters, framework, compute);
  const WeightCasts w = weight_casts(parameters, framework, compute);
  const int64_t accumulate = grad_accumulation_ns(parameters, framework, precision, compute);
  t.forward_ns += c.gather_ns + w.forward_ns;
  t.input_grad_ns += c.gather_ns;  // the backward's gather is needed before the input gradients
  // The reduction, the gradient's cast and its accumulation start once the weight gradients exist.
  t.weight_grad_ns += c.reduce_ns + w.backward_ns + accumulate;
  t.backward_ns += c.gather_ns + c.reduce_ns + w.backward_ns + accumulate;
}

}  // namespace meshscope::predict
