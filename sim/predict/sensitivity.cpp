#include "sim/predict/sensitivity.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>

#include "sim/cost/framework.h"
#include "sim/cost/hardware.h"
#include "sim/cost/sources.h"

namespace meshscope::predict {
namespace {

// One catalog figure: how to read it and set it in an entry.
struct Figure {
  const char* key;
  double cost::Hardware::*top = nullptr;           // a number of the entry itself
  double cost::Efficiency::*efficiency = nullptr;  // of its `efficiency`
  double cost::LinkTier::*link = nullptr;          // of `intra_node` (intra) or `inter_node`
  bool intra = false;
  bool capped_at_one = false;  // a fraction of a peak rate or of a link's bandwidth
  bool count = false;          // collective_ctas: a whole number

  double get(const cost::Hardware& hw) const {
    if (count) return hw.collective_ctas;
    if (top != nullptr) return hw.*top;
    if (efficiency != nullptr) return hw.efficiency.*efficiency;
    return (intra ? hw.intra_node : hw.inter_node).*link;
  }
  void set(cost::Hardware& hw, double v) const {
    if (count)
      hw.collective_ctas = static_cast<int>(v);
    else if (top != nullptr)
      hw.*top = v;
    else if (efficiency != nullptr)
      hw.efficiency.*efficiency = v;
    else
      (intra ? hw.intra_node : hw.inter_node).*link = v;
  }
};

// The figures that price work and transfers. Not varied: the datasheet's peak rates, memory size
// and SM count (facts of the device, not estimates), the GEMM tile sizes (whole kernel shapes),
// the node's shape (a choice of the cluster, which a config states).
const std::vector<Figure>& figures() {
  using cost::Efficiency;
  using cost::Hardware;
  using cost::LinkTier;
  static const std::vector<Figure> kFigures = {
      {.key = "efficiency.gemm_max", .efficiency = &Efficiency::gemm_max, .capped_at_one = true},
      {.key = "efficiency.sustained", .efficiency = &Efficiency::sustained, .capped_at_one = true},
      {.key = "efficiency.sustained_spread", .efficiency = &Efficiency::sustained_spread},
      {.key = "efficiency.k_half", .efficiency = &Efficiency::k_half},
      {.key = "efficiency.gemm_fp8_max",
       .efficiency = &Efficiency::gemm_fp8_max,
       .capped_at_one = true},
      {.key = "efficiency.fp8_k_half", .efficiency = &Efficiency::fp8_k_half},
      {.key = "efficiency.attention", .efficiency = &Efficiency::attention, .capped_at_one = true},
      {.key = "efficiency.attention_flash2",
       .efficiency = &Efficiency::attention_flash2,
       .capped_at_one = true},
      {.key = "efficiency.attention_flash3",
       .efficiency = &Efficiency::attention_flash3,
       .capped_at_one = true},
      {.key = "efficiency.conv", .efficiency = &Efficiency::conv, .capped_at_one = true},
      {.key = "efficiency.memory", .efficiency = &Efficiency::memory, .capped_at_one = true},
      {.key = "memory_bandwidth_bytes_per_s", .top = &Hardware::memory_bandwidth_bytes_per_s},
      {.key = "launch_overhead_ns", .top = &Hardware::launch_overhead_ns},
      {.key = "collective_ctas", .count = true},
      {.key = "intra_node.bandwidth_bytes_per_s",
       .link = &LinkTier::bandwidth_bytes_per_s,
       .intra = true},
      {.key = "intra_node.latency_ns", .link = &LinkTier::latency_ns, .intra = true},
      {.key = "intra_node.collective_efficiency",
       .link = &LinkTier::collective_efficiency,
       .intra = true,
       .capped_at_one = true},
      {.key = "intra_node.nvls_bus_bandwidth_bytes_per_s",
       .link = &LinkTier::nvls_bus_bandwidth_bytes_per_s,
       .intra = true},
      {.key = "inter_node.bandwidth_bytes_per_s", .link = &LinkTier::bandwidth_bytes_per_s},
      {.key = "inter_node.latency_ns", .link = &LinkTier::latency_ns},
      {.key = "inter_node.collective_efficiency",
       .link = &LinkTier::collective_efficiency,
       .capped_at_one = true},
  };
  return kFigures;
}

// A number of a framework profile that prices work: its elementwise passes, its extra memory
// passes and the loss's bytes. Not varied: its choices (kernel, overlap, recomputation), which are
// not quantities.
struct ProfileFigure {
  std::string key;
  double cost::Framework::*field = nullptr;
  double model::ElementwisePasses::*pass = nullptr;
  cost::ByPrecision cost::Framework::*by = nullptr;  // with `part`, one of its figures
  double cost::ByPrecision::*part = nullptr;

  double get(const cost::Framework& fw) const {
    if (pass != nullptr) return fw.passes.*pass;
    if (by != nullptr) return fw.*by.*part;
    return fw.*field;
  }
  void set(cost::Framework& fw, double v) const {
    if (pass != nullptr)
      fw.passes.*pass = v;
    else if (by != nullptr)
      fw.*by.*part = v;
    else
      fw.*field = v;
  }
};

// A figure a profile may give by precision: the number for every precision under the key itself
// (`with_all`) and one for each precision, "key.bf16", "key.fp16", "key.fp32".
void add_by_precision(std::vector<ProfileFigure>& out, const std::string& key,
                      cost::ByPrecision cost::Framework::*by, bool with_all) {
  if (with_all) out.push_back({.key = key, .by = by, .part = &cost::ByPrecision::all});
  out.push_back({.key = key + ".bf16", .by = by, .part = &cost::ByPrecision::bf16});
  out.push_back({.key = key + ".fp16", .by = by, .part = &cost::ByPrecision::fp16});
  out.push_back({.key = key + ".fp32", .by = by, .part = &cost::ByPrecision::fp32});
}

const std::vector<ProfileFigure>& profile_figures() {
  using cost::Framework;
  using model::ElementwisePasses;
  static const std::vector<ProfileFigure> kFigures = [] {
    std::vector<ProfileFigure> f = {
        {.key = "elementwise_passes.norm", .pass = &ElementwisePasses::norm},
        {.key = "elementwise_passes.activation", .pass = &ElementwisePasses::activation},
        {.key = "elementwise_passes.residual", .pass = &ElementwisePasses::residual},
        {.key = "elementwise_passes.rope", .pass = &ElementwisePasses::rope},
        {.key = "elementwise_passes.softmax", .pass = &ElementwisePasses::softmax},
        {.key = "elementwise_backward_passes.norm", .pass = &ElementwisePasses::norm_grad},
        {.key = "elementwise_backward_passes.activation",
         .pass = &ElementwisePasses::activation_grad},
        {.key = "elementwise_backward_passes.residual", .pass = &ElementwisePasses::residual_grad},
        {.key = "elementwise_backward_passes.rope", .pass = &ElementwisePasses::rope_grad},
        {.key = "elementwise_backward_passes.softmax", .pass = &ElementwisePasses::softmax_grad}};
    add_by_precision(f, "grad_reduce_bytes", &Framework::grad_reduce_bytes, true);
    f.insert(f.end(), {{.key = "sharded_copies.gather", .field = &Framework::gather_copy_bytes},
                       {.key = "sharded_copies.reduce", .field = &Framework::reduce_copy_bytes},
                       {.key = "weight_casts.forward", .field = &Framework::cast_forward_bytes},
                       {.key = "weight_casts.backward", .field = &Framework::cast_backward_bytes}});
    add_by_precision(f, "grad_accumulation", &Framework::grad_accumulation, false);
    f.insert(f.end(), {{.key = "loss_bytes.forward", .field = &Framework::loss_forward_bytes},
                       {.key = "loss_bytes.backward", .field = &Framework::loss_backward_bytes},
                       {.key = "loss_saved_bytes", .field = &Framework::loss_saved_bytes},
                       {.key = "attention_forward_speedup",
                        .field = &Framework::attention_forward_speedup}});
    add_by_precision(f, "optimizer_step_bytes", &Framework::optimizer_step_bytes, true);
    return f;
  }();
  return kFigures;
}

// The value a figure is simulated at, `sign` -1 or +1 fraction away.
double moved(const Figure& f, double value, double fraction, int sign) {
  double v = value * (1 + sign * fraction);
  if (f.capped_at_one) v = std::min(v, 1.0);
  if (f.count) {
    v = std::round(v);
    if (v == value) v = value + sign;
    v = std::max(v, 0.0);
  }
  return v;
}

// The config key that sets `figure` in the entry's or profile's place (resolved.cpp applies
// them): "" when the file's figure is the run's.
std::string overriding_key(const PredictConfig& c, const std::string& figure) {
  if (figure == "inter_node.bandwidth_bytes_per_s" && c.network_gbps > 0)
    return "cluster.network_gbps";
  if (figure.ends_with("nvls_bus_bandwidth_bytes_per_s") && !c.nvls) return "cluster.nvls";
  if (figure.starts_with("grad_reduce_bytes") && c.grad_reduce_dtype)
    return "options.grad_reduce_dtype";
  return "";
}

}  // namespace

double FigureSensitivity::largest_change(double step_time_s) const {
  if (step_time_s <= 0) return 0;
  return std::max(std::abs(step_time_s_at_low_value - step_time_s),
                  std::abs(step_time_s_at_high_value - step_time_s)) /
         step_time_s;
}

std::vector<std::string> sensitivity_figures() {
  std::vector<std::string> out;
  for (const Figure& f : figures()) out.emplace_back(f.key);
  return out;
}

Sensitivity sensitivity(const PredictConfig& config, double fraction,
                        const SimulateOptions& options,
                        const std::function<void(size_t, size_t)>& done) {
  if (!(fraction > 0 && fraction < 1))
    throw std::invalid_argument("sensitivity: the fraction must be in (0, 1)");
  if (options.calibration != nullptr)
    throw std::invalid_argument(
        "sensitivity: a calibration's fitted rates replace the catalog's figures, so moving "
        "those would change nothing");
  const std::shared_ptr<const cost::Hardware> entry =
      config.hardware.entry && config.hardware.gpu == config.gpu
          ? config.hardware.entry
          : std::make_shared<const cost::Hardware>(cost::find_hardware(config.gpu));
  // The profile's figures as it states them: a figure the config states itself
  // (options.grad_reduce_dtype over grad_reduce_bytes) is the run's, and moving the profile's
  // moves nothing, as the catalog's network does under cluster.network_gbps.
  PredictConfig as_profiled = config;
  as_profiled.grad_reduce_dtype.reset();
  const cost::Framework profile = framework_of(as_profiled);
  SimulateOptions so = options;
  so.build_timeline = false;
  so.breakdown = false;
  auto step_with = [&](const cost::Hardware& hw, const cost::Framework& fw) {
    PredictConfig c = config;
    c.hardware = {config.gpu, std::make_shared<const cost::Hardware>(hw)};
    c.profile = {config.framework, std::make_shared<const cost::Framework>(fw)};
    return simulate(c, so).summary;
  };

  std::vector<const Figure*> varied;
  for (const Figure& f : figures())
    if (f.get(*entry) != 0) varied.push_back(&f);
  // attention_forward_speedup 1 is "one rate for both directions", not a figure; a gradient count
  // below 0 is "the rule", not stated.
  std::vector<const ProfileFigure*> varied_profile;
  for (const ProfileFigure& f : profile_figures())
    if (f.get(profile) > 0 &&
        !(f.field == &cost::Framework::attention_forward_speedup && f.get(profile) == 1))
      varied_profile.push_back(&f);
  const size_t total = 1 + 2 * (varied.size() + varied_profile.size());
  size_t finished = 0;
  auto tick = [&] {
    if (done) done(++finished, total);
  };

  Sensitivity s;
  s.hardware = entry->name;
  s.framework = profile.name;
  s.fraction = fraction;
  const Summary base = step_with(*entry, profile);
  tick();
  if (base.step_time_s <= 0)
    throw std::invalid_argument("sensitivity: the configuration has no step time to vary");
  s.step_time_s = base.step_time_s;
  s.fits = base.fits;
  // One figure at its two values: `simulate_at(v)` is the step with the figure at v.
  auto vary = [&](const std::string& key, double value, double low, double high,
                  const std::vector<std::string>& sources, const auto& simulate_at) {
    FigureSensitivity r;
    r.figure = key;
    r.value = value;
    r.low_value = low;
    r.high_value = high;
    r.step_time_s_at_low_value = simulate_at(low);
    tick();
    r.step_time_s_at_high_value = simulate_at(high);
    tick();
    r.source = cost::source_clause(sources, key);
    r.assumption = r.source.find("assum") != std::string::npos;
    r.overridden_by = overriding_key(config, key);
    return r;
  };
  for (const Figure* f : varied) {
    const double v = f->get(*entry);
    s.figures.push_back(vary(f->key, v, moved(*f, v, fraction, -1), moved(*f, v, fraction, +1),
                             entry->sources, [&](double at) {
                               cost::Hardware hw = *entry;
                               f->set(hw, at);
                               return step_with(hw, profile).step_time_s;
                             }));
  }
  for (const ProfileFigure* f : varied_profile) {
    const double v = f->get(profile);
    s.profile_figures.push_back(
        vary(f->key, v, v * (1 - fraction), v * (1 + fraction), profile.sources, [&](double at) {
          cost::Framework fw = profile;
          f->set(fw, at);
          return step_with(*entry, fw).step_time_s;
        }));
  }
  auto largest_first = [&](std::vector<FigureSensitivity>& v) {
    std::stable_sort(v.begin(), v.end(), [&](const auto& a, const auto& b) {
      return a.largest_change(s.step_time_s) > b.largest_change(s.step_time_s);
    });
  };
  largest_first(s.figures);
  largest_first(s.profile_figures);
  return s;
}

nlohmann::json to_json(const Sensitivity& s) {
  auto rows = [](const std::vector<FigureSensitivity>& figures) {
    nlohmann::json out = nlohmann::json::array();
    for (const FigureSensitivity& f : figures)
      out.push_back({{"figure", f.figure},
                     {"value", f.value},
                     {"low_value", f.low_value},
                     {"high_value", f.high_value},
                     {"step_time_s_at_low_value", f.step_time_s_at_low_value},
                     {"step_time_s_at_high_value", f.step_time_s_at_high_value},
                     {"source", f.source},
                     {"assumption", f.assumption},
                     {"overridden_by", f.overridden_by.empty() ? nlohmann::json()
                                                               : nlohmann::json(f.overridden_by)}});
    return out;
  };
  return {{"hardware", s.hardware},
          {"framework", s.framework},
          {"fraction", s.fraction},
          {"step_time_s", s.step_time_s},
          {"fits", s.fits},
          {"figures", rows(s.figures)},
          {"profile_figures", rows(s.profile_figures)}};
}

}  // namespace meshscope::predict
