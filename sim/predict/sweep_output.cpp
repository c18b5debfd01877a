// csv_of and chart_of: a sweep's rows as `predict --csv` and `--plot` write them.
#include "sim/predict/sweep_output.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <map>

#include "traces/number_text.h"

namespace meshscope::predict {
namespace {

// A quoted CSV field (RFC 4180: quotes inside doubled).
std::string quoted(const std::string& v) {
  std::string o = "\"";
  for (char c : v) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

// A swept value as a number, when all of it is one.
std::optional<double> number_of(const std::string& v) {
  try {
    size_t used = 0;
    const double x = std::stod(v, &used);
    if (used == v.size() && std::isfinite(x)) return x;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

}  // namespace

bool sweeps_schedule(const std::vector<SweepRow>& rows) {
  if (rows.empty()) return false;
  const auto& swept = rows.front().swept;
  return std::any_of(swept.begin(), swept.end(),
                     [](const auto& kv) { return kv.first == "schedule"; });
}

std::string csv_of(const std::vector<SweepRow>& rows) {
  std::string o;
  const bool schedule_swept = sweeps_schedule(rows);
  if (!rows.empty())
    for (const auto& [k, v] : rows.front().swept) o += k + ",";
  o += std::string("gpus,mesh,") + (schedule_swept ? "" : "schedule,") +
       "step_time_s,tokens_per_s,tflops_per_gpu,mfu,bubble_fraction,peak_memory_bytes,fits,error,"
       "step_time_s_low,step_time_s_high,tokens_per_s_low,tokens_per_s_high,mfu_low,mfu_high\n";
  for (const SweepRow& r : rows) {
    for (const auto& [k, v] : r.swept) o += quoted(v) + ",";
    const Summary& s = r.summary;
    if (r.error.empty()) {
      o += std::to_string(s.gpus) + "," + quoted(s.mesh) + "," +
           (schedule_swept ? std::string() : s.schedule + ",") +
           traces::format_number("%.9g", s.step_time_s) + "," +
           traces::format_number("%.9g", s.tokens_per_s) + "," +
           traces::format_number("%.6g", s.tflops_per_gpu) + "," +
           traces::format_number("%.6g", s.mfu) + "," +
           traces::format_number("%.6g", s.bubble_fraction) + "," +
           std::to_string(s.peak_memory_bytes) + "," + (s.fits ? "true" : "false") + ",\"\"," +
           traces::format_number("%.9g", s.step_time_s_low) + "," +
           traces::format_number("%.9g", s.step_time_s_high) + "," +
           traces::format_number("%.9g", s.tokens_per_s_low) + "," +
           traces::format_number("%.9g", s.tokens_per_s_high) + "," +
           traces::format_number("%.6g", s.mfu_low) + "," +
           traces::format_number("%.6g", s.mfu_high) + "\n";
    } else {  // no figures for a point that did not run
      o += std::string(schedule_swept ? ",,,,,,,,," : ",,,,,,,,,,") + quoted(r.error) + ",,,,,,\n";
    }
  }
  return o;
}

Chart chart_of(const std::vector<SweepRow>& rows) {
  Chart c;
  c.title = "predicted throughput";
  c.y_label = "tokens/s";
  std::map<std::string, Series> series;
  std::vector<const SweepRow*> ran;
  for (const SweepRow& r : rows)
    if (r.error.empty()) ran.push_back(&r);
  bool gpus_vary = false;
  for (const SweepRow* r : ran) gpus_vary |= r->summary.gpus != ran.front()->summary.gpus;
  std::string xkey = "gpus";
  if (!gpus_vary && !rows.empty() && !rows.front().swept.empty())
    xkey = rows.front().swept.front().first;
  c.x_label = xkey;
  c.log_x = xkey == "gpus";
  bool categorical = false;
  std::vector<std::string> values;  // of the x key, in order of appearance
  for (const SweepRow* r : ran)
    for (const auto& [k, v] : r->swept) {
      if (k != xkey) continue;
      categorical |= !number_of(v);
      if (std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
    }
  if (categorical) c.x_categories = std::move(values);
  for (const SweepRow* row : ran) {
    const SweepRow& r = *row;
    double x = static_cast<double>(r.summary.gpus);
    std::string label;
    for (const auto& [k, v] : r.swept) {
      if (k == xkey) {
        if (c.x_categories.empty()) {
          x = number_of(v).value_or(0);
        } else {
          x = static_cast<double>(std::find(c.x_categories.begin(), c.x_categories.end(), v) -
                                  c.x_categories.begin());
        }
      } else if (!(gpus_vary && (k.rfind("mesh.", 0) == 0))) {
        label += (label.empty() ? "" : " ") + k + "=" + v;
      }
    }
    if (label.empty()) label = r.summary.schedule;
    Series& s = series[label];
    s.label = label;
    s.x.push_back(x);
    s.y.push_back(r.summary.tokens_per_s);
    s.y_low.push_back(r.summary.tokens_per_s_low);
    s.y_high.push_back(r.summary.tokens_per_s_high);
  }
  for (auto& [k, s] : series) c.series.push_back(std::move(s));
  return c;
}

}  // namespace meshscope::predict
