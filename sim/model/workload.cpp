// The four executable workloads and their shapes.
#include "sim/model/workload.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "traces/enum_names.h"

namespace meshscope::model {
namespace {

constexpr int kClassifierInput = 784;  // MNIST-shaped: 28 x 28 pixels
constexpr int kClassifierHidden = 256;
constexpr int kClassifierClasses = 10;

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("workload: " + what);
}

Workload chain() {
  Workload w;
  w.input_dim = 1;
  w.output_dim = 1;
  w.loss = LossKind::kMse;
  const int dims[] = {1, 2, 3, 1};
  for (int i = 0; i < 3; ++i) {
    const std::string n = "linear" + std::to_string(i);
    w.units.push_back(Unit{n, {LinearSpec{n, dims[i], dims[i + 1]}}, false});
  }
  return w;
}

Workload classifier() {
  Workload w;
  w.input_dim = kClassifierInput;
  w.output_dim = kClassifierClasses;
  w.loss = LossKind::kSoftmaxCrossEntropy;
  w.units.push_back(Unit{
      "fc1",
      {LinearSpec{"fc1", kClassifierInput, kClassifierHidden, Activation::kRelu, TpSplit::kColumn}},
      false});
  w.units.push_back(Unit{
      "fc2",
      {LinearSpec{"fc2", kClassifierHidden, kClassifierClasses, Activation::kNone, TpSplit::kRow}},
      false});
  return w;
}

Workload mlp(const WorkloadSpec& spec) {
  require(spec.layers >= 1, "mlp layers must be >= 1, got " + std::to_string(spec.layers));
  require(spec.hidden >= 1 && spec.hidden <= (1 << 16),
          "mlp hidden must be in [1, 65536], got " + std::to_string(spec.hidden));
  Workload w;
  w.input_dim = spec.hidden;
  w.output_dim = spec.hidden;
  w.loss = LossKind::kMse;
  const int h = spec.hidden;
  for (int i = 0; i < spec.layers; ++i) {
    const std::string n = "block" + std::to_string(i);
    w.units.push_back(Unit{n,
                           {LinearSpec{n + ".fc1", h, 4 * h, Activation::kGelu, TpSplit::kColumn},
                            LinearSpec{n + ".fc2", 4 * h, h, Activation::kNone, TpSplit::kRow}},
                           true});
  }
  return w;
}

// Upper bounds that keep a typo from allocating the machine away; far above what the executor
// runs on CPUs (assumption: a moe run here has tens of experts at most).
constexpr int kMaxExperts = 1024;

Workload moe(const WorkloadSpec& spec) {
  require(spec.layers >= 1, "moe layers must be >= 1, got " + std::to_string(spec.layers));
  require(spec.hidden >= 1 && spec.hidden <= (1 << 14),
          "moe hidden must be in [1, 16384], got " + std::to_string(spec.hidden));
  require(spec.experts >= 1 && spec.experts <= kMaxExperts,
          "moe experts must be in [1, " + std::to_string(kMaxExperts) + "], got " +
              std::to_string(spec.experts));
  require(spec.top_k >= 1 && spec.top_k <= spec.experts,
          "moe top-k must be in [1, experts = " + std::to_string(spec.experts) + "], got " +
              std::to_string(spec.top_k) + " (a token goes to top-k distinct experts)");
  // Beyond `experts` the capacity exceeds tokens * k: nothing more can be kept.
  char factor[32];
  for (int digits = 6; digits <= 17; ++digits) {  // the shortest text that reads back the same
    std::snprintf(factor, sizeof factor, "%.*g", digits, spec.capacity_factor);
    if (std::strtod(factor, nullptr) == spec.capacity_factor) break;
  }
  require(spec.capacity_factor > 0 && spec.capacity_factor <= spec.experts,
          "moe capacity factor must be in (0, experts = " + std::to_string(spec.experts) +
              "], got " + factor);
  require(spec.ep >= 1 && spec.experts % spec.ep == 0,
          "moe experts (" + std::to_string(spec.experts) + ") must be divisible by ep (" +
              std::to_string(spec.ep) + ")");
  Workload w;
  w.input_dim = spec.hidden;
  w.output_dim = spec.hidden;
  w.loss = LossKind::kMse;
  const int h = spec.hidden, f = 4 * spec.hidden;
  for (int i = 0; i < spec.layers; ++i) {
    const std::string n = "block" + std::to_string(i);
    Unit u{n, {LinearSpec{n + ".router", h, spec.experts}}, true, UnitKind::kMoe};
    for (int e = 0; e < spec.experts; ++e) {
      const std::string x = n + ".expert" + std::to_string(e);
      u.linears.push_back(LinearSpec{x + ".fc1", h, f, Activation::kGelu, TpSplit::kReplicated, e});
      u.linears.push_back(LinearSpec{x + ".fc2", f, h, Activation::kNone, TpSplit::kReplicated, e});
    }
    w.units.push_back(std::move(u));
  }
  return w;
}

}  // namespace

std::optional<WorkloadKind> parse_workload_kind(std::string_view s) {
  return traces::parse_enum<WorkloadKind>(kWorkloadKindNames, s);
}

Workload make_workload(const WorkloadSpec& spec) {
  require(spec.batch >= 1, "batch must be >= 1, got " + std::to_string(spec.batch));
  require(spec.lr > 0 && spec.lr < 100, "learning rate must be in (0, 100)");
  Workload w;
  switch (spec.kind) {
    case WorkloadKind::kChain:
      w = chain();
      break;
    case WorkloadKind::kClassifier:
      w = classifier();
      break;
    case WorkloadKind::kMlp:
      w = mlp(spec);
      break;
    case WorkloadKind::kMoe:
      w = moe(spec);
      break;
    case WorkloadKind::kCount:
      require(false, "unknown workload kind");
  }
  w.spec = spec;
  return w;
}

int64_t Workload::parameters() const {
  int64_t p = 0;
  for (const Unit& u : units) {
    for (const LinearSpec& l : u.linears) p += int64_t{l.in} * l.out + l.out;
  }
  return p;
}

int Workload::num_linears() const {
  int n = 0;
  for (const Unit& u : units) n += static_cast<int>(u.linears.size());
  return n;
}

std::string Workload::describe() const {
  std::string s(name(spec.kind));
  if (spec.kind == WorkloadKind::kMlp || spec.kind == WorkloadKind::kMoe) {
    s += " L=" + std::to_string(spec.layers) + " h=" + std::to_string(spec.hidden);
  }
  if (spec.kind == WorkloadKind::kMoe) {
    char cf[32];
    std::snprintf(cf, sizeof cf, "%g", spec.capacity_factor);
    s += " E=" + std::to_string(spec.experts) + " k=" + std::to_string(spec.top_k) + " cf=" + cf;
    if (spec.ep > 1) s += " ep=" + std::to_string(spec.ep);
  }
  return s + " batch=" + std::to_string(spec.batch);
}

double loss_scale(const Workload& w) {
  const double per_sample = w.loss == LossKind::kMse ? w.output_dim : 1;
  return 1.0 / (static_cast<double>(w.spec.batch) * per_sample);
}

int microbatch_rows(int batch, int dp, int microbatches) {
  const int64_t parts = int64_t{dp} * microbatches;
  if (parts < 1 || batch % parts != 0) {
    throw std::invalid_argument("workload: the global batch of " + std::to_string(batch) +
                                " samples does not split into dp=" + std::to_string(dp) + " x " +
                                std::to_string(microbatches) + " microbatches of equal size");
  }
  return static_cast<int>(batch / parts);
}

int expert_capacity(const WorkloadSpec& spec, int tokens) {
  // A product a hair above a whole number in double (1.1 x 10 x 2 / 11 = 2.0000000000000004)
  // counts as that number: the rounding error of the four factors is far below 1e-9 relative.
  const double x = spec.capacity_factor * tokens * spec.top_k / spec.experts;
  const double c = std::ceil(x - 1e-9 * x);
  return std::max(1, static_cast<int>(c));
}

int local_experts(const WorkloadSpec& spec) { return spec.experts / std::max(spec.ep, 1); }
int first_local_expert(const WorkloadSpec& spec, int ep_rank) {
  return ep_rank * local_experts(spec);
}

int local_in(const LinearSpec& l, int tp) { return l.split == TpSplit::kRow ? l.in / tp : l.in; }
int local_out(const LinearSpec& l, int tp) {
  return l.split == TpSplit::kColumn ? l.out / tp : l.out;
}

void check_tp(const Workload& w, int tp) {
  require(tp >= 1, "tp must be >= 1");
  if (w.spec.kind == WorkloadKind::kMoe && tp > 1) {
    throw std::invalid_argument(
        "workload: moe runs with tp = 1 (its experts are sharded over ep, "
        "not split over tp), got tp=" +
        std::to_string(tp));
  }
  // Every tp rank would compute the whole model alone: "equal to one device" would say nothing of
  // tensor parallelism.
  bool any_split = false;
  for (const Unit& u : w.units)
    for (const LinearSpec& l : u.linears) any_split |= l.split != TpSplit::kReplicated;
  if (tp > 1 && !any_split) {
    throw std::invalid_argument("workload: " + w.describe() +
                                " has no layer split over tp (each rank would hold the whole "
                                "model), got tp=" +
                                std::to_string(tp) + "; use mlp or classifier for tp");
  }
  for (const Unit& u : w.units) {
    for (const LinearSpec& l : u.linears) {
      const int split = l.split == TpSplit::kColumn ? l.out : l.split == TpSplit::kRow ? l.in : 0;
      if (split % tp != 0) {
        throw std::invalid_argument("workload: " + l.name + " splits " + std::to_string(split) +
                                    " features over tp=" + std::to_string(tp) +
                                    ", which does not divide them");
      }
    }
  }
}

}  // namespace meshscope::model
