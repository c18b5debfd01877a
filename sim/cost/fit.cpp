// Least-squares fits of compute rates and link alpha/beta from Timelines.
#include "sim/cost/fit.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>

#include "sim/cost/collective_model.h"
#include "traces/analysis_stragglers.h"
#include "traces/enum_names.h"

namespace meshscope::cost {
namespace {

struct Samples {
  std::vector<double> x, y;
};

// The windows to learn from: every step but the first when there are several.
std::vector<traces::StepWindow> windows_of(const traces::Timeline& t) {
  if (t.steps.size() >= 2) return {t.steps.begin() + 1, t.steps.end()};
  if (!t.steps.empty()) return t.steps;
  return {t.extent()};
}

bool inside(const traces::Span& s, const std::vector<traces::StepWindow>& w) {
  for (const traces::StepWindow& x : w)
    if (s.begin_ns >= x.begin_ns && s.end_ns <= x.end_ns) return true;
  return false;
}

// The members of a collective's group in the trace's mesh (Timeline::run; axes it does not know
// count 1; ep and edp from the workload's ep, sim/mesh/mesh.h).
int group_size(const traces::RunDescriptor& run, traces::GroupKind g) {
  const traces::MeshExtent& m = run.mesh;
  const int dp = std::max(m.dp, 1), pp = std::max(m.pp, 1), tp = std::max(m.tp, 1);
  const int ep =
      run.workload.ep > 0 && dp % run.workload.ep == 0 ? static_cast<int>(run.workload.ep) : 1;
  switch (g) {
    case traces::GroupKind::kDp:
      return dp;
    case traces::GroupKind::kPp:
      return pp;
    case traces::GroupKind::kTp:
      return tp;
    case traces::GroupKind::kEp:
      return ep;
    case traces::GroupKind::kEdp:
      return dp / ep;
    case traces::GroupKind::kWorld:
    case traces::GroupKind::kCount:
      break;
  }
  return dp * pp * tp;
}

// The cost model's kind of a traced op: the same enum (sim/cost/collective_model.h aliases it).
constexpr CollectiveKind kind_of(traces::CollectiveOp op) { return op; }

// The group sizes of a link's fitted collectives (LinkFit::min_ranks, max_ranks, timed_alone).
struct GroupsSeen {
  int min = INT_MAX, max = 0, timed_alone = 0;
  void into(LinkFit& f) const {
    if (max == 0) return;
    f.min_ranks = min;
    f.max_ranks = max;
    f.timed_alone = timed_alone;
  }
};

// A trace recorded by another tool (its waits are inside its spans).
bool imported_source(traces::RunSource s) {
  return s == traces::RunSource::kKineto || s == traces::RunSource::kChrome ||
         s == traces::RunSource::kNsys;
}

// How an imported collective (one whose group the trace names by its size: an NCCL kernel of a
// PyTorch profile) is timed. Its kernel starts when its rank reaches it and ends when the whole
// group is done, so its time includes the wait for the group's last member; only that member's
// kernel times the transfer. In a job's folder each imported collective is paired with its peers
// on the other ranks (traces::stragglers: by name, group and occurrence) and timed on the last to
// arrive; one rank's file pairs nothing, and each is timed alone, as is one whose group has members
// the trace lacks. meshscope's own collectives start once their group is ready (their wait is
// recorded apart, Timeline::waits) and are timed as they are.
class ImportedTiming {
 public:
  enum class Role { kOwn, kLastArrival, kWaitedForOthers, kAlone };
  explicit ImportedTiming(const traces::Timeline& t) {
    const bool any =
        std::any_of(t.collectives.begin(), t.collectives.end(),
                    [](const traces::SpanCollective& c) { return c.collective.ranks > 0; });
    if (!any) return;
    for (const traces::CollectiveInstance& i : traces::stragglers(t).instances) {
      // With members missing from the trace (a folder of some of the job's ranks), the last
      // to arrive of those read may have waited for one not read: timed alone.
      const traces::Collective* c = t.collective_of(i.spans.front());
      const bool whole = c == nullptr || static_cast<int64_t>(i.spans.size()) >= c->ranks;
      for (const uint32_t span : i.spans) {
        if (t.spans[span].device != i.last_device)
          role_[span] = Role::kWaitedForOthers;
        else
          role_[span] = whole ? Role::kLastArrival : Role::kAlone;
      }
    }
  }
  Role role(const traces::SpanCollective& c) const {
    if (c.collective.ranks == 0) return Role::kOwn;
    const auto it = role_.find(c.span);
    return it == role_.end() ? Role::kAlone : it->second;
  }

 private:
  std::map<uint32_t, Role> role_;
};

}  // namespace

namespace {

LineFit fit_once(const std::vector<double>& x, const std::vector<double>& y) {
  LineFit f;
  f.samples = static_cast<int>(x.size());
  if (x.empty()) return f;
  const double n = static_cast<double>(x.size());
  double sx = 0, sy = 0;
  for (size_t i = 0; i < x.size(); ++i) sx += x[i], sy += y[i];
  const double mx = sx / n, my = sy / n;
  double sxx = 0, sxy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
  }
  const bool varied = mx > 0 && std::sqrt(sxx / n) > 0.01 * mx;
  bool separable = varied;
  if (varied) {
    f.slope = sxy / sxx;
    f.intercept = my - f.slope * mx;
    // Where x varies little against the noise in y (spans of two stages whose FLOPs differ by
    // the loss's few percent), the slope is the noise's: one run's backward fitted 44 GFLOP/s and
    // the next 19, its spans' own rate, the rest an intercept. The slope is kept only where it is
    // at least twice its standard error (the usual t > 2 of a least-squares slope); else the
    // ratio of sums, as for x of one value.
    if (x.size() >= 3) {
      double residual = 0;
      for (size_t i = 0; i < x.size(); ++i) {
        const double r = y[i] - (f.intercept + f.slope * x[i]);
        residual += r * r;
      }
      const double slope_error = std::sqrt(residual / (n - 2) / sxx);
      separable = f.slope > 2 * slope_error;
    }
  }
  // An overhead longer than the shortest span is noise fitted as overhead, not overhead.
  const double shortest = *std::min_element(y.begin(), y.end());
  if (!separable || f.intercept < 0 || f.slope <= 0 || f.intercept >= shortest) {
    f.intercept = 0;
    f.slope = sx > 0 ? sy / sx : 0;
  }
  double err = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double pred = f.intercept + f.slope * x[i];
    if (y[i] > 0) err += ((pred - y[i]) / y[i]) * ((pred - y[i]) / y[i]);
  }
  f.rms_relative_error = std::sqrt(err / n);
  return f;
}

}  // namespace

LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y) {
  LineFit f = fit_once(x, y);
  if (x.size() < 10) return f;
  // Profiles of a shared machine carry preempted spans: drop the worst tenth and fit again.
  std::vector<std::pair<double, size_t>> res;
  for (size_t i = 0; i < x.size(); ++i) {
    const double pred = f.intercept + f.slope * x[i];
    res.emplace_back(std::fabs(pred - y[i]) / std::max(pred, 1e-9), i);
  }
  std::sort(res.begin(), res.end());
  std::vector<double> kx, ky;
  for (size_t k = 0; k < res.size() - res.size() / 10; ++k) {
    kx.push_back(x[res[k].second]);
    ky.push_back(y[res[k].second]);
  }
  LineFit g = fit_once(kx, ky);
  g.samples = static_cast<int>(x.size());
  return g;
}

ComputeTime::ComputeTime(const traces::Timeline& t) {
  for (const traces::SpanCollective& c : t.collectives) {
    const traces::Span& s = t.spans[c.span];
    if (s.microbatch < 0 || s.stage < 0) continue;  // a schedule's own collective action
    nested_[{s.device, s.stage, s.microbatch, s.phase}].emplace_back(t.reached_ns(c.span),
                                                                     s.end_ns);
  }
  for (auto& [key, spans] : nested_) std::sort(spans.begin(), spans.end());
}

int64_t ComputeTime::ns(const traces::Span& s) const {
  int64_t ns = s.duration_ns();
  const auto it = nested_.find({s.device, s.stage, s.microbatch, s.phase});
  if (it == nested_.end()) return ns;
  const auto& spans = it->second;
  auto c = std::lower_bound(spans.begin(), spans.end(), std::make_pair(s.begin_ns, INT64_MIN));
  for (; c != spans.end() && c->first < s.end_ns; ++c) {
    if (c->second <= s.end_ns) ns -= c->second - c->first;
  }
  return std::max<int64_t>(ns, 0);
}

Calibration fit_calibration(const std::vector<const traces::Timeline*>& timelines,
                            const Hardware& hw, Precision precision) {
  std::map<traces::Phase, Samples> compute;
  size_t untimed_compute = 0;  // priced spans (FLOPs, a phase) of no time
  Samples p2p, coll, all_to_all;
  GroupsSeen coll_groups, all_to_all_groups;
  int p2p_alone = 0;  // imported receives without their send (LinkFit::timed_alone)
  for (const traces::Timeline* t : timelines) {
    const auto win = windows_of(*t);
    const ComputeTime computing(*t);
    std::map<uint32_t, int64_t> send_begin;  // recv span -> the begin of the send it received
    for (const traces::Flow& f : t->flows) {
      if (traces::is_transfer_flow(*t, f) && t->spans[f.from].kind == traces::SpanKind::kSend)
        send_begin[f.to] = t->spans[f.from].begin_ns;
    }
    for (const traces::Span& s : t->spans) {
      const bool priced =
          s.kind == traces::SpanKind::kCompute && s.flops > 0 && s.phase != traces::Phase::kNone;
      if (!inside(s, win)) continue;
      if (s.end_ns <= s.begin_ns) {
        untimed_compute += priced;
        continue;
      }
      // A compute span without a phase (another tool's kernel with args.flops) prices no phase
      // of a schedule: not fitted.
      if (priced) {
        const int64_t busy = computing.ns(s);
        if (busy <= 0) {
          ++untimed_compute;
          continue;
        }
        compute[s.phase].x.push_back(s.flops);
        compute[s.phase].y.push_back(static_cast<double>(busy));
      } else if (s.kind == traces::SpanKind::kRecv && s.bytes > 0) {
        // From the later of its own begin and its send's: a recv posted before the send waited
        // for it (an imported NCCL recv kernel spins from its launch; meshscope's own start once
        // the data is ready). Without a send (one rank's file), as it is.
        const auto send = send_begin.find(static_cast<uint32_t>(&s - t->spans.data()));
        const int64_t from =
            send == send_begin.end() ? s.begin_ns : std::max(s.begin_ns, send->second);
        if (from >= s.end_ns) continue;
        p2p.x.push_back(static_cast<double>(s.bytes));
        p2p.y.push_back(static_cast<double>(s.end_ns - from));
        p2p_alone += send == send_begin.end() && imported_source(t->run.source);
      }
    }
    const ImportedTiming imported(*t);
    for (const traces::SpanCollective& c : t->collectives) {
      const traces::Span& s = t->spans[c.span];
      if (c.collective.op == traces::CollectiveOp::kOther) continue;  // not priced: not fitted
      if (!inside(s, win) || s.end_ns <= s.begin_ns || s.bytes <= 0) continue;
      const int n =
          c.collective.ranks > 0 ? c.collective.ranks : group_size(t->run, c.collective.group);
      if (n <= 1) continue;
      const ImportedTiming::Role role = imported.role(c);
      if (role == ImportedTiming::Role::kWaitedForOthers) continue;
      const bool a2a = c.collective.op == traces::CollectiveOp::kAllToAll;
      Samples& into = a2a ? all_to_all : coll;
      into.x.push_back(bus_factor(kind_of(c.collective.op), n) * static_cast<double>(s.bytes));
      into.y.push_back(static_cast<double>(s.duration_ns()));
      GroupsSeen& seen = a2a ? all_to_all_groups : coll_groups;
      seen.min = std::min(seen.min, n);
      seen.max = std::max(seen.max, n);
      seen.timed_alone += role == ImportedTiming::Role::kAlone ? 1 : 0;
    }
  }
  // Spans with FLOPs and a phase that took no time (a trace's durations of 1e-9 us) had been
  // "no compute span with FLOPs and a phase": they have both, and no time.
  if (compute.empty() && p2p.x.empty() && coll.x.empty() && all_to_all.x.empty() &&
      untimed_compute > 0)
    throw std::invalid_argument("calibrate: the traces' " + std::to_string(untimed_compute) +
                                " compute span" + (untimed_compute == 1 ? "" : "s") +
                                " with FLOPs and a phase took no time (their durations are 0 "
                                "ns once read): nothing to fit");
  if (compute.empty() && p2p.x.empty() && coll.x.empty() && all_to_all.x.empty())
    throw std::invalid_argument(
        "calibrate: the traces have no compute span with FLOPs and a phase (forward, backward, "
        "...), no received transfer with bytes "
        "and no collective of a known group: nothing to fit (meshscope's own traces, `meshscope "
        "run --out`, carry them; an imported profile's kernels name no FLOPs, and its NCCL "
        "kernels are fitted only where PyTorch recorded their \"Group size\": for its GEMM rates, "
        "use --gemm-rates)");
  Calibration c;
  c.hardware = hw.name;
  c.precision = std::string(name(precision));
  double peak = hw.peak(precision);
  if (peak <= 0) peak = hw.peak(Precision::kFp32);
  for (const auto& [phase, smp] : compute) {
    const LineFit f = fit_line(smp.x, smp.y);
    PhaseFit& p = c.phases[static_cast<size_t>(phase)];
    p.flops_per_s = f.slope > 0 ? 1e9 / f.slope : 0;
    p.overhead_ns = f.intercept;
    p.efficiency = peak > 0 ? p.flops_per_s / peak : 0;
    p.samples = f.samples;
    p.rms_error = f.rms_relative_error;
  }
  auto link = [](const Samples& s) {
    LinkFit l;
    if (s.x.empty()) return l;
    const LineFit f = fit_line(s.x, s.y);
    l.alpha_ns = f.intercept;
    l.bandwidth_bytes_per_s = f.slope > 0 ? 1e9 / f.slope : 0;
    l.samples = f.samples;
    l.rms_error = f.rms_relative_error;
    return l;
  };
  c.p2p = link(p2p);
  c.collective = link(coll);
  c.all_to_all = link(all_to_all);
  c.p2p.timed_alone = p2p_alone;
  coll_groups.into(c.collective);
  all_to_all_groups.into(c.all_to_all);
  // A fit of links alone holds whatever format the configs it is given to compute in.
  if (std::all_of(c.phases.begin(), c.phases.end(),
                  [](const PhaseFit& f) { return f.samples == 0; }))
    c.precision.clear();
  return c;
}

}  // namespace meshscope::cost
