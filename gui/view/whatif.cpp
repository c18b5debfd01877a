// What-if configuration text, metadata parsing and the scaling sweep.
#include "gui/view/whatif.h"

#include <algorithm>
#include <charconv>
#include <exception>
#include <sstream>

#include "traces/analysis.h"

namespace meshscope::gui {
namespace {

std::optional<int> to_int(std::string_view s) {
  int v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v < 1) return std::nullopt;
  return v;
}

}  // namespace

std::string describe(const WhatIfConfig& c) {
  std::string out = c.schedule + " dp=" + std::to_string(c.dp) + " pp=" + std::to_string(c.pp) +
                    " tp=" + std::to_string(c.tp) + " m=" + std::to_string(c.microbatches);
  if (c.schedule == "interleaved") out += " v=" + std::to_string(c.virtual_stages);
  if (c.micro_batch > 0) out += " mb=" + std::to_string(c.micro_batch);
  if (!c.hardware.empty()) out += " on " + c.hardware;
  return out;
}

WhatIfConfig config_from_metadata(const traces::Timeline& t, WhatIfConfig c) {
  auto get = [&](const char* key) -> std::optional<std::string> {
    auto it = t.metadata.find(key);
    if (it == t.metadata.end() || it->second.empty()) return std::nullopt;
    return it->second;
  };
  if (auto s = get("schedule")) c.schedule = *s;
  if (auto m = get("microbatches")) c.microbatches = to_int(*m).value_or(c.microbatches);
  if (auto mesh = get("mesh")) {
    std::istringstream in(*mesh);
    std::string word;
    while (in >> word) {
      const auto eq = word.find('=');
      if (eq == std::string::npos) continue;
      const std::string key = word.substr(0, eq);
      const auto v = to_int(std::string_view(word).substr(eq + 1));
      if (!v) continue;
      if (key == "dp") c.dp = *v;
      if (key == "pp") c.pp = *v;
      if (key == "tp") c.tp = *v;
    }
  }
  if (auto hw = get("hardware")) c.hardware = *hw;
  if (auto model = get("model")) {
    c.model = *model;
    for (const auto& [key, value] : description_words(*model)) {
      const auto batch = key == "batch" ? to_int(value) : std::nullopt;
      if (batch && *batch % (c.dp * c.microbatches) == 0)
        c.micro_batch = *batch / (c.dp * c.microbatches);
    }
  }
  return c;
}

std::vector<std::pair<std::string, std::string>> description_words(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream in(text);
  std::string word;
  bool first = true;
  while (in >> word) {
    const auto eq = word.find('=');
    if (first && eq == std::string::npos) {
      out.emplace_back("", word);
    } else if (eq != std::string::npos) {
      out.emplace_back(word.substr(0, eq), word.substr(eq + 1));
    }
    first = false;
  }
  return out;
}

std::vector<int> scaling_values(ScalingAxis axis, const WhatIfConfig& c) {
  int limit = 64, own = c.microbatches;
  if (axis == ScalingAxis::kPipeline) {
    limit = 16;
    own = c.pp;
  } else if (axis == ScalingAxis::kDataParallel) {
    limit = 16;
    own = c.dp;
  }
  std::vector<int> xs;
  for (int x = 1; x <= limit; x *= 2) xs.push_back(x);
  if (std::find(xs.begin(), xs.end(), own) == xs.end()) xs.push_back(own);
  std::sort(xs.begin(), xs.end());
  return xs;
}

WhatIfConfig with_value(WhatIfConfig c, ScalingAxis axis, int value) {
  switch (axis) {
    case ScalingAxis::kMicrobatches:
      c.microbatches = value;
      break;
    case ScalingAxis::kPipeline:
      c.pp = value;
      break;
    default:
      c.dp = value;
      break;
  }
  return c;
}

std::vector<ScalingPoint> sweep(const Predictor& p, const WhatIfConfig& c, ScalingAxis axis) {
  std::vector<ScalingPoint> points;
  double base = 0;
  for (int x : scaling_values(axis, c)) {
    ScalingPoint pt;
    pt.x = x;
    const WhatIfConfig cx = with_value(c, axis, x);
    try {
      const traces::Timeline t = p.simulate(cx);
      const traces::TimelineAnalysis a = traces::analyze(t);
      pt.step_ns = a.step_time_ns;
      pt.bubble_fraction = a.bubble_fraction;
      if (pt.step_ns > 0) {
        const double rate =
            static_cast<double>(cx.microbatches) * cx.dp / static_cast<double>(pt.step_ns);
        if (base == 0) base = rate;
        pt.throughput = rate / base;
      }
    } catch (const std::exception& e) {
      pt.error = e.what();
    }
    points.push_back(std::move(pt));
  }
  return points;
}

}  // namespace meshscope::gui
