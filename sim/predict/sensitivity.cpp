#include "sim/predict/sensitivity.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>

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
      {.key = "efficiency.k_half", .efficiency = &Efficiency::k_half},
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
      {.key = "inter_node.bandwidth_bytes_per_s", .link = &LinkTier::bandwidth_bytes_per_s},
      {.key = "inter_node.latency_ns", .link = &LinkTier::latency_ns},
      {.key = "inter_node.collective_efficiency",
       .link = &LinkTier::collective_efficiency,
       .capped_at_one = true},
  };
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

}  // namespace

double FigureSensitivity::largest_change(double step_time_s) const {
  if (step_time_s <= 0) return 0;
  return std::max(std::abs(step_time_s_low - step_time_s),
                  std::abs(step_time_s_high - step_time_s)) /
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
  SimulateOptions so = options;
  so.build_timeline = false;
  so.breakdown = false;
  auto step_with = [&](const cost::Hardware& hw) {
    PredictConfig c = config;
    c.hardware = {config.gpu, std::make_shared<const cost::Hardware>(hw)};
    return simulate(c, so).summary;
  };

  std::vector<const Figure*> varied;
  for (const Figure& f : figures())
    if (f.get(*entry) != 0) varied.push_back(&f);
  const size_t total = 1 + 2 * varied.size();
  size_t finished = 0;
  auto tick = [&] {
    if (done) done(++finished, total);
  };

  Sensitivity s;
  s.hardware = entry->name;
  s.fraction = fraction;
  const Summary base = step_with(*entry);
  tick();
  if (base.step_time_s <= 0)
    throw std::invalid_argument("sensitivity: the configuration has no step time to vary");
  s.step_time_s = base.step_time_s;
  s.fits = base.fits;
  for (const Figure* f : varied) {
    FigureSensitivity r;
    r.figure = f->key;
    r.value = f->get(*entry);
    r.low_value = moved(*f, r.value, fraction, -1);
    r.high_value = moved(*f, r.value, fraction, +1);
    cost::Hardware hw = *entry;
    f->set(hw, r.low_value);
    r.step_time_s_low = step_with(hw).step_time_s;
    tick();
    f->set(hw, r.high_value);
    r.step_time_s_high = step_with(hw).step_time_s;
    tick();
    r.source = cost::source_clause(entry->sources, f->key);
    r.assumption = r.source.find("assum") != std::string::npos;
    s.figures.push_back(std::move(r));
  }
  std::stable_sort(s.figures.begin(), s.figures.end(), [&](const auto& a, const auto& b) {
    return a.largest_change(s.step_time_s) > b.largest_change(s.step_time_s);
  });
  return s;
}

nlohmann::json to_json(const Sensitivity& s) {
  nlohmann::json figures = nlohmann::json::array();
  for (const FigureSensitivity& f : s.figures)
    figures.push_back({{"figure", f.figure},
                       {"value", f.value},
                       {"low_value", f.low_value},
                       {"high_value", f.high_value},
                       {"step_time_s_low", f.step_time_s_low},
                       {"step_time_s_high", f.step_time_s_high},
                       {"source", f.source},
                       {"assumption", f.assumption}});
  return {{"hardware", s.hardware},
          {"fraction", s.fraction},
          {"step_time_s", s.step_time_s},
          {"fits", s.fits},
          {"figures", figures}};
}

}  // namespace meshscope::predict
