// `meshscope predict --config FILE.json [--json] [--csv F] [--plot F.svg]` and
// `meshscope predict --search --gpus N --config FILE.json`: simulated step time, throughput,
// MFU, bubbles and memory of one configuration, a sweep, or the best mesh for a GPU budget.
#include <CLI/CLI.hpp>

#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/json_text.h"
#include "cli/output_path.h"
#include "cli/predict_from_trace.h"
#include "cli/predict_notes.h"
#include "cli/predict_sensitivity.h"
#include "cli/sim_options.h"
#include "sim/predict/config.h"
#include "sim/predict/fit_alternatives.h"
#include "sim/predict/plot.h"
#include "sim/predict/search.h"
#include "sim/predict/simulate.h"
#include "sim/schedule/families.h"
#include "traces/atomic_file.h"

namespace meshscope::cli {
namespace {

struct PredictArgs {
  SimInputArgs input;
  bool json = false;
  std::string csv;
  std::string plot;
  bool search = false;
  bool breakdown = false;
  bool sensitivity = false;
  double sensitivity_percent = 10;
  int64_t gpus = 0;
  int top = 10;
  PredictFromTraceArgs trace;  // --from-trace: replay a torch pipelining job
};

// Point i of n done: on a terminal a bar redrawn in place; elsewhere (a log, CI) a plain line at
// each quarter, so redirected output does not fill with carriage returns.
void progress(size_t i, size_t n) {
  if (n <= 1 || i == 0) return;
  if (::isatty(::fileno(stderr))) {
    const int width = 30;
    const int done = static_cast<int>(width * i / n);
    std::fprintf(stderr, "\r[%s%s] %zu/%zu", std::string(done, '#').c_str(),
                 std::string(width - done, ' ').c_str(), i, n);
    if (i == n) std::fprintf(stderr, "\n");
  } else if (i * 4 / n != (i - 1) * 4 / n) {
    std::fprintf(stderr, "predict: %zu of %zu points done\n", i, n);
  }
  std::fflush(stderr);
}

std::string gib(double bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f GiB", bytes / (1024.0 * 1024 * 1024));
  return b;
}

struct Row {
  std::vector<std::pair<std::string, std::string>> swept;
  predict::Summary summary;
  std::string error;  // the point could not be simulated
  // For a single point that does not fit: the recomputation and ZeRO stages that would.
  std::optional<predict::FitAlternatives> fit;
};

// A synchronous run computes at its slowest GPU's rate (catalog sustained_spread): how far below
// the mean, per hardware, at the fewest and the most GPUs of the rows.
void print_slowest_gpu(const std::vector<Row>& rows) {
  std::map<std::string, std::pair<const Row*, const Row*>> spread;
  for (const Row& r : rows) {
    if (!r.error.empty() || r.summary.slowest_gpu_share >= 1) continue;
    const auto it = spread.try_emplace(r.summary.hardware, &r, &r).first;
    if (r.summary.gpus < it->second.first->summary.gpus) it->second.first = &r;
    if (r.summary.gpus > it->second.second->summary.gpus) it->second.second = &r;
  }
  for (const auto& [hardware, ends] : spread) {
    const auto at = [](const Row* r, const char* what) {
      char b[96];
      std::snprintf(b, sizeof b, "%.1f%%%s at %lld GPUs", 100 * (1 - r->summary.slowest_gpu_share),
                    what, static_cast<long long>(r->summary.gpus));
      return std::string(b);
    };
    const auto [few, many] = ends;
    std::string where = at(few, " below the mean");
    if (many->summary.gpus != few->summary.gpus) where += ", " + at(many, "");
    std::printf(
        "%s: a run computes at its slowest GPU's sustained rate: %s (catalog sustained_spread "
        "%.4g; docs/ACCURACY.md item 29)\n",
        hardware.c_str(), where.c_str(), few->summary.sustained_spread);
  }
}

// The rows a note speaks for, by their swept values ("h200-sxm, b200-sxm"), or their count past
// four.
std::string rows_label(const std::vector<const Row*>& rows) {
  if (rows.size() > 4) return std::to_string(rows.size()) + " rows";
  std::string label;
  for (const Row* r : rows) {
    std::string values;
    for (const auto& [key, value] : r->swept) values += (values.empty() ? "" : " ") + value;
    label += (label.empty() ? "" : ", ") + values;
  }
  return label;
}

// What the ranges in brackets are, once per distinct basis, in the order the rows first use them;
// where the rows' ranges come from more than one basis (a sweep over GPUs or profiles), each note
// names the rows it speaks for.
void print_range_bases(const std::vector<Row>& rows) {
  std::vector<std::pair<const Row*, std::vector<const Row*>>> bases;  // first row, its rows
  for (const Row& r : rows) {
    if (!r.error.empty() || r.summary.range_rows == 0) continue;  // no range printed
    const auto it = std::find_if(bases.begin(), bases.end(), [&](const auto& b) {
      return b.first->summary.range_basis == r.summary.range_basis;
    });
    if (it == bases.end())
      bases.push_back({&r, {&r}});
    else
      it->second.push_back(&r);
  }
  for (const auto& [first, covered] : bases)
    std::printf(
        "%s(a..b): where 80%% of published runs would fall around such predictions, from %s, %d "
        "development runs (docs/ACCURACY.md)\n",
        bases.size() > 1 ? (rows_label(covered) + ": ").c_str() : "",
        first->summary.range_basis.c_str(), first->summary.range_rows);
}

// Whether the schedule is a swept key: its column is then the swept one, in the table and the CSV.
bool sweeps_schedule(const std::vector<Row>& rows) {
  if (rows.empty()) return false;
  const auto& swept = rows.front().swept;
  return std::any_of(swept.begin(), swept.end(),
                     [](const auto& kv) { return kv.first == "schedule"; });
}

// "fits" leaves out the allocator's cache, NCCL's buffers and the CUDA context: against the one
// published measured peak (torchtitan's Llama 3.1 8B on 8 and 128 H100s), the model is 12.5% and
// 13.4% under (docs/ACCURACY.md, "Measured peaks"). A peak within that of the GPU's memory fits
// "tight", so that a row that fits by a few GiB is not read as room to spare.
constexpr double kMeasuredUnder = 0.125;
bool fits_tight(const predict::Summary& s) {
  return s.fits &&
         static_cast<double>(s.peak_memory_bytes) > (1 - kMeasuredUnder) * s.memory_capacity_bytes;
}

void print_table(const std::vector<Row>& rows) {
  std::vector<std::string> header;
  const bool schedule_swept = sweeps_schedule(rows);
  if (!rows.empty())
    for (const auto& [k, v] : rows.front().swept) header.push_back(k);
  for (const char* h : {"gpus", "mesh", "schedule", "step time", "tokens/s", "TFLOP/s/GPU", "MFU",
                        "bubble", "peak memory", "fits"})
    if (!(schedule_swept && std::string_view(h) == "schedule")) header.push_back(h);
  std::vector<std::vector<std::string>> cells;
  for (const Row& r : rows) {
    std::vector<std::string> c;
    for (const auto& [k, v] : r.swept) c.push_back(v);
    if (!r.error.empty()) {
      c.push_back("error: " + r.error);
    } else {
      const predict::Summary& s = r.summary;
      c.push_back(std::to_string(s.gpus));
      c.push_back(s.mesh);
      if (!schedule_swept) c.push_back(s.schedule);
      // The development set's range beside each point (Summary::range_basis), where it has one.
      const bool range = s.range_rows > 0;
      c.push_back(
          fmt("%.4g s", s.step_time_s) +
          (range ? fmt(" (%.3g", s.step_time_s_low) + fmt("..%.3g)", s.step_time_s_high) : ""));
      c.push_back(
          fmt("%.4g", s.tokens_per_s) +
          (range ? fmt(" (%.3g", s.tokens_per_s_low) + fmt("..%.3g)", s.tokens_per_s_high) : ""));
      // A CPU's rate is a small fraction of a TFLOP/s: its digits, not 0.0.
      c.push_back(tflops_text(s.tflops_per_gpu));
      c.push_back(mfu_percent_text(s.mfu) +
                  (range ? fmt(" (%.1f", 100 * s.mfu_low) + fmt("..%.1f)", 100 * s.mfu_high) : ""));
      c.push_back(fmt("%.1f%%", 100 * s.bubble_fraction));
      c.push_back(gib(static_cast<double>(s.peak_memory_bytes)));
      c.push_back(!s.fits ? "NO" : fits_tight(s) ? "tight" : "yes");
    }
    cells.push_back(std::move(c));
  }
  std::vector<size_t> w(header.size(), 0);
  for (size_t i = 0; i < header.size(); ++i) w[i] = header[i].size();
  // An error row's message runs on past the columns; it does not widen them.
  for (size_t r = 0; r < cells.size(); ++r) {
    const size_t n = rows[r].error.empty() ? cells[r].size() : rows[r].swept.size();
    for (size_t i = 0; i < n && i < w.size(); ++i) w[i] = std::max(w[i], cells[r][i].size());
  }
  auto line = [&](const std::vector<std::string>& c) {
    std::string s;
    for (size_t i = 0; i < c.size(); ++i)
      s += c[i] + std::string(i + 1 < c.size() && i < w.size() ? w[i] - c[i].size() + 2 : 0, ' ');
    std::printf("%s\n", s.c_str());
  };
  line(header);
  for (const auto& c : cells) line(c);
  print_range_bases(rows);
  // A range measured on shorter sequences than the config's is an extrapolation: say so once.
  for (const Row& r : rows)
    if (r.error.empty() && r.summary.range_beyond_seq) {
      std::printf(
          "beyond the range's runs: the longest sequence behind %s is %lld tokens; for longer ones "
          "the range is an extrapolation (docs/ACCURACY.md, held-back sets 5 and 6)\n",
          r.summary.range_basis.c_str(), static_cast<long long>(r.summary.range_max_seq));
      break;
    }
  for (const Row& r : rows)
    if (r.error.empty() && r.summary.range_without_fp8) {
      std::printf(
          "FP8: the range's runs are all BF16 ones; how FP8 runs fall around it is measured on "
          "NVIDIA's, held back (docs/ACCURACY.md item 50, set 9)\n");
      break;
    }
  // A model without a sequence (mlp, vgg) counts one token a sample: its tokens/s are samples
  // (images) per second, which the column's name does not say.
  for (const Row& r : rows)
    if (r.error.empty() && r.summary.samples_per_s > 0 &&
        r.summary.tokens_per_s == r.summary.samples_per_s) {
      std::printf(
          "tokens/s of a model without a sequence (mlp, vgg): samples (images) per "
          "second\n");
      break;
    }
  // MFU counts every FLOP against the options.precision peak, FP8 ones too (as NVIDIA's FP8 tables
  // do), so an FP8 run can pass 100%: said, so that it does not read as a fault. Said of the
  // count, not of the run: a hardware file's own peak can put a run past 100% too.
  for (const Row& r : rows)
    if (r.error.empty() && r.summary.mfu > 1) {
      std::printf(
          "MFU over 100%%: MFU counts every FLOP against the options.precision peak; FP8 linears "
          "run at up to twice it (as NVIDIA's FP8 tables count it; docs/CONFIG.md, options.fp8)\n");
      break;
    }
  print_slowest_gpu(rows);
  if (std::any_of(rows.begin(), rows.end(),
                  [](const Row& r) { return r.error.empty() && fits_tight(r.summary); }))
    std::printf(
        "fits tight: the peak is within 12.5%% of the GPU's memory; it leaves out the allocator's "
        "cache, NCCL's buffers and the CUDA context, and was 12.5-13.4%% under the one measured "
        "peak (docs/ACCURACY.md, \"Measured peaks\"): it may not fit\n");
  for (const Row& r : rows)
    if (r.error.empty() && !r.summary.fits) {
      std::printf(
          "fits NO: the predicted peak memory is above the GPU's memory (--breakdown: "
          "what holds it)\n");
      if (r.fit) std::printf("%s", predict::format_fit_alternatives(*r.fit, r.summary).c_str());
      break;
    }
}

// --breakdown, memory: the fullest device (its pp coordinate; replicas are alike), what holds its
// memory (memory.h) against the device's capacity.
void print_memory(const predict::Summary& s) {
  if (s.memory.empty()) return;
  size_t full = 0;
  for (size_t i = 1; i < s.memory.size(); ++i)
    if (s.memory[i].total() > s.memory[full].total()) full = i;
  const predict::DeviceMemory& m = s.memory[full];
  constexpr double kGiB = 1024.0 * 1024 * 1024;
  std::printf(
      "\nmemory on the fullest device, pp rank %zu: %.1f GiB of %.1f GiB%s%s\n", full,
      m.total() / kGiB, s.memory_capacity_bytes / kGiB, s.fits ? "" : ": does not fit",
      m.peak_at_first_reduce ? ", at its peak when FSDP reduces the last block's gradients" : "");
  auto line = [&](const char* what, int64_t bytes, const char* note) {
    std::printf("  %-18s %8.1f GiB  %5.1f%%%s\n", what, bytes / kGiB,
                m.total() > 0 ? 100.0 * bytes / m.total() : 0.0, note);
  };
  // What each holds a parameter, and over how many devices: what a config's options (zero,
  // grad_reduce_dtype, optimizer_state_bytes) and its profile made of it.
  auto per_param = [](double bytes, int shards) {
    char buf[96];
    if (shards > 1)
      std::snprintf(buf, sizeof buf, "  (%g bytes a parameter, sharded over %d)", bytes, shards);
    else
      std::snprintf(buf, sizeof buf, "  (%g bytes a parameter)", bytes);
    return std::string(buf);
  };
  line("parameters", m.parameters_bytes,
       per_param(s.state_bytes.parameters, s.parameter_shards).c_str());
  line("gradients", m.gradients_bytes,
       per_param(s.state_bytes.gradients, s.gradient_shards).c_str());
  line("optimizer state", m.optimizer_bytes,
       per_param(s.state_bytes.optimizer, s.optimizer_shards).c_str());
  if (m.peak_at_first_reduce) {
    line("activations", m.activations_bytes,
         "  (still kept then: the head's and the last block's are freed)");
    line("FSDP unsharded", m.unsharded_bytes,
         "  (whole then: the root unit, the output layer's gradient, the blocks gathered ahead, "
         "the last block's gradients and their reduce copy)");
    return;
  }
  line("activations", m.activations_bytes, "  (the most the schedule holds at once)");
  if (m.working_bytes > 0)
    line("loss working set", m.working_bytes, "  (held while the loss runs, beyond what it saves)");
  if (m.unsharded_bytes > 0)
    line("FSDP unsharded", m.unsharded_bytes,
         "  (whole beside the shards while the loss runs: the root unit, blocks kept whole)");
}

// --breakdown: each point's device with the busiest compute stream, term by term (breakdown.h),
// and its fullest device's memory.
void print_breakdowns(const std::vector<Row>& rows) {
  for (const Row& r : rows) {
    if (!r.error.empty()) continue;
    const predict::Breakdown& b = r.summary.breakdown;
    std::string point;
    for (const auto& [k, v] : r.swept) point += (point.empty() ? " (" : ", ") + k + "=" + v;
    if (!point.empty()) point += ")";
    if (!b.known) {
      std::printf("\nno breakdown%s: the step was not simulated\n", point.c_str());
      print_memory(r.summary);
      continue;
    }
    std::printf("\nwhere the step goes%s on the busiest device, pp rank %d (dp 0, tp 0):\n",
                point.c_str(), b.pp);
    auto line = [&](const std::string& what, double seconds, const char* note) {
      std::printf("  %-18s %10.4f s  %5.1f%%%s\n", what.c_str(), seconds,
                  b.step_s > 0 ? 100 * seconds / b.step_s : 0.0, note);
    };
    for (size_t i = 0; i < b.busy.seconds.size(); ++i)
      if (b.busy.seconds[i] > 0)
        line(predict::name(static_cast<predict::Term>(i)), b.busy.seconds[i], "");
    if (b.sm_held_s > 0)
      line("SMs held by comm", b.sm_held_s,
           "  (compute slowed by the SMs of collectives and pipeline transfers beside it)");
    // Calibrated phases and cores shared between ranks price compute apart from the op terms.
    if (std::abs(b.other_s) > 1e-6 * b.step_s)
      line("other compute", b.other_s, "  (calibrated rates, shared cores)");
    line("idle", b.idle_s, "  (pipeline bubble, collectives not hidden, waiting for transfers)");
    line("step", b.step_s, "");
    std::printf("  %-18s %10.4f s          on its own streams, overlapping the above\n",
                "communication", b.communication_s);
    if (b.dp_collectives_wire_s > 0) {
      const double hidden = b.dp_collectives_wire_s - b.dp_collectives_exposed_s;
      if (hidden > 1e-9 * b.dp_collectives_wire_s)
        std::printf(
            "  %-18s %10.4f s          on the links; on a free stream they would cost the step "
            "%.4f s: %.4f s not hidden behind compute, %.4f s of compute slowed by the SMs they "
            "hold while hidden (queued ones hide less: see communication)\n",
            "dp collectives", b.dp_collectives_wire_s, b.dp_collectives_charged_s,
            b.dp_collectives_exposed_s, b.dp_collectives_charged_s - b.dp_collectives_exposed_s);
      else
        std::printf(
            "  %-18s %10.4f s          on the links, run for all of it (none priced as "
            "hidden behind compute)\n",
            "dp collectives", b.dp_collectives_wire_s);
    }
    print_memory(r.summary);
  }
}

void write_file(const std::string& path, const std::string& text) {
  traces::AtomicFile f(path);
  f.write(text);
  f.commit();
}

// A quoted CSV field (RFC 4180: quotes inside doubled).
std::string quoted(const std::string& v) {
  std::string o = "\"";
  for (char c : v) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

std::string csv_of(const std::vector<Row>& rows) {
  std::string o;
  const bool schedule_swept = sweeps_schedule(rows);
  if (!rows.empty())
    for (const auto& [k, v] : rows.front().swept) o += k + ",";
  o += std::string("gpus,mesh,") + (schedule_swept ? "" : "schedule,") +
       "step_time_s,tokens_per_s,tflops_per_gpu,mfu,bubble_fraction,"
       "peak_memory_bytes,fits,error,step_time_s_low,step_time_s_high,tokens_per_s_low,tokens_per_"
       "s_high,"
       "mfu_low,mfu_high\n";
  for (const Row& r : rows) {
    for (const auto& [k, v] : r.swept) o += quoted(v) + ",";
    const predict::Summary& s = r.summary;
    if (r.error.empty()) {
      o += std::to_string(s.gpus) + "," + quoted(s.mesh) + "," +
           (schedule_swept ? std::string() : s.schedule + ",") + fmt("%.9g", s.step_time_s) + "," +
           fmt("%.9g", s.tokens_per_s) + "," + fmt("%.6g", s.tflops_per_gpu) + "," +
           fmt("%.6g", s.mfu) + "," + fmt("%.6g", s.bubble_fraction) + "," +
           std::to_string(s.peak_memory_bytes) + "," + (s.fits ? "true" : "false") + ",\"\"," +
           fmt("%.9g", s.step_time_s_low) + "," + fmt("%.9g", s.step_time_s_high) + "," +
           fmt("%.9g", s.tokens_per_s_low) + "," + fmt("%.9g", s.tokens_per_s_high) + "," +
           fmt("%.6g", s.mfu_low) + "," + fmt("%.6g", s.mfu_high) + "\n";
    } else {  // no figures for a point that did not run
      o += std::string(schedule_swept ? ",,,,,,,,," : ",,,,,,,,,,") + quoted(r.error) + ",,,,,,\n";
    }
  }
  return o;
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

// X axis: GPUs when they vary, else the first swept key, its values in order of appearance when
// they are not all numbers (a GPU or schedule sweep); one series per combination of the other
// swept keys. Rows that did not run have no place on it.
predict::Chart chart_of(const std::vector<Row>& rows) {
  predict::Chart c;
  c.title = "predicted throughput";
  c.y_label = "tokens/s";
  std::map<std::string, predict::Series> series;
  std::vector<const Row*> ran;
  for (const Row& r : rows)
    if (r.error.empty()) ran.push_back(&r);
  bool gpus_vary = false;
  for (const Row* r : ran) gpus_vary |= r->summary.gpus != ran.front()->summary.gpus;
  std::string xkey = "gpus";
  if (!gpus_vary && !rows.empty() && !rows.front().swept.empty())
    xkey = rows.front().swept.front().first;
  c.x_label = xkey;
  c.log_x = xkey == "gpus";
  bool categorical = false;
  std::vector<std::string> values;  // of the x key, in order of appearance
  for (const Row* r : ran)
    for (const auto& [k, v] : r->swept) {
      if (k != xkey) continue;
      categorical |= !number_of(v);
      if (std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
    }
  if (categorical) c.x_categories = std::move(values);
  for (const Row* row : ran) {
    const Row& r = *row;
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
    predict::Series& s = series[label];
    s.label = label;
    s.x.push_back(x);
    s.y.push_back(r.summary.tokens_per_s);
    s.y_low.push_back(r.summary.tokens_per_s_low);
    s.y_high.push_back(r.summary.tokens_per_s_high);
  }
  for (auto& [k, s] : series) c.series.push_back(std::move(s));
  return c;
}

void run_search(const PredictArgs& a, const predict::PredictConfig& base,
                const cost::Calibration* cal) {
  predict::SearchOptions so;
  so.gpus = a.gpus;
  so.calibration = cal;
  predict::SearchReport report;
  const auto found = predict::search(base, so, progress, &report);
  if (found.empty())
    throw UserError(a.input.config + ": " + predict::why_nothing_fits(base, so, report));
  if (a.json) {
    nlohmann::json out = nlohmann::json::array();
    for (size_t i = 0; i < found.size() && static_cast<int>(i) < a.top; ++i) {
      nlohmann::json j = predict::to_json(found[i].summary);
      j["candidate"] = found[i].label;
      out.push_back(j);
    }
    std::printf("%s\n", json_text(out).c_str());
  }
  std::vector<Row> rows;
  for (size_t i = 0; i < found.size() && static_cast<int>(i) < a.top; ++i)
    rows.push_back(Row{{{"candidate", found[i].label}}, found[i].summary, "", std::nullopt});
  if (a.csv == "-") {
    std::fputs(csv_of(rows).c_str(), stdout);
  } else if (!a.csv.empty()) {
    write_file(a.csv, csv_of(rows));
  }
  if (a.json || a.csv == "-") return;
  std::printf("fastest configurations of %lld GPUs that fit (%zu fit):\n",
              static_cast<long long>(a.gpus), found.size());
  print_table(rows);
  std::vector<const predict::PredictConfig*> configs;
  for (size_t i = 0; i < found.size() && static_cast<int>(i) < a.top; ++i)
    configs.push_back(&found[i].config);
  std::fputs(uneven_layer_splits(configs).c_str(), stdout);
  // The base's tp_comm_overlap is off where a candidate has no tp: say so, since the config with
  // that mesh alone is refused until it is turned off too.
  bool dropped = false;
  for (size_t i = 0; i < found.size() && static_cast<int>(i) < a.top; ++i)
    dropped = dropped || (base.tp_comm_overlap && !found[i].config.tp_comm_overlap);
  if (dropped) {
    std::printf(
        "rows with tp=1 run without tp_comm_overlap (it needs tp > 1): set "
        "options.tp_comm_overlap false to predict one of them alone\n");
  }
}

// One configuration simulated as it is and once per figure of its catalog entry moved down and
// up (sim/predict/sensitivity.h).
void run_sensitivity(const PredictArgs& a, const std::vector<predict::SweepPoint>& points,
                     const cost::Calibration* cal) {
  const std::string& where = a.input.config;
  if (!std::isfinite(a.sensitivity_percent))
    throw usage_error("--sensitivity-percent: not a number");
  if (points.size() != 1)
    throw UserError(where + ": --sensitivity takes one configuration, not a sweep (" +
                    std::to_string(points.size()) + " points)");
  if (!points.front().error.empty()) throw UserError(where + ": " + points.front().error);
  if (cal != nullptr)
    throw usage_error(
        "--sensitivity moves the catalog's figures, which a calibration's fitted rates replace: "
        "leave --calibration out");
  predict::Sensitivity s;
  try {
    s = predict::sensitivity(points.front().config, a.sensitivity_percent / 100, {}, progress);
  } catch (const std::exception& e) {
    throw UserError(where + ": " + e.what());
  }
  if (a.json) {
    std::printf("%s\n", json_text(predict::to_json(s)).c_str());
    return;
  }
  std::printf("%s", format_sensitivity(s).c_str());
}

void run(const PredictArgs& a) {
  // The chart is SVG whatever the name: a name of another image format would be misread.
  for (const char* raster : {".png", ".jpg", ".jpeg", ".gif", ".webp", ".pdf"}) {
    if (std::filesystem::path(a.plot).extension() == raster)
      throw usage_error("--plot '" + a.plot + "': the chart is written as SVG; name it .svg");
  }
  require_distinct_outputs({{"--csv", &a.csv}, {"--plot", &a.plot}},
                           {{"--config", a.input.config},
                            {"--calibration", a.input.calibration},
                            {"--from-trace", a.trace.trace}});
  if (a.csv == "-" && (a.json || a.breakdown))
    throw usage_error(
        "--csv - prints the rows as CSV in place of the table: leave out --json and "
        "--breakdown, or give --csv a file");
  if (a.breakdown && (a.search || !a.trace.trace.empty()))
    throw usage_error("--breakdown goes with --config alone, not with --search or --from-trace");
  if (a.sensitivity && (a.search || !a.trace.trace.empty()))
    throw usage_error("--sensitivity goes with --config alone, not with --search or --from-trace");
  if (a.sensitivity && (a.breakdown || !a.csv.empty() || !a.plot.empty()))
    throw usage_error(
        "--sensitivity prints its own table (--json for JSON), not the prediction's: leave out "
        "--breakdown, --csv and --plot");
  if (!a.trace.trace.empty()) {
    if (!a.csv.empty() || !a.plot.empty())
      throw usage_error(
          "--csv and --plot write a prediction's rows, not a replay's: with "
          "--from-trace, --json gives every figure");
    if (!a.input.calibration.empty())
      throw usage_error(
          "--calibration goes with --config: --from-trace replays the job with the costs "
          "measured in its own traces");
    PredictFromTraceArgs t = a.trace;
    t.json = a.json;
    run_predict_from_trace(t);
    return;
  }
  if (a.input.config.empty()) throw usage_error("predict needs --config FILE or --from-trace DIR");
  if (a.search && !a.plot.empty())
    throw usage_error(
        "--plot draws a sweep's throughput; --search ranks meshes (--csv writes them)");
  const SimInputs in = load_sim_inputs(a.input);
  const std::string& where = a.input.config;
  const std::vector<predict::SweepPoint> points = predict::expand_sweep(in.config, where);
  if (a.search) {
    if (a.gpus == 0) throw usage_error("--search needs --gpus N");
    if (points.size() != 1)
      throw UserError(where + ": --search takes one configuration, not a sweep (" +
                      std::to_string(points.size()) + " points)");
    run_search(a, predict::parse_config(in.config, where), in.calibration_or_null());
    return;
  }
  if (a.sensitivity) {
    run_sensitivity(a, points, in.calibration_or_null());
    return;
  }
  std::vector<Row> rows;
  predict::SimulateOptions so;
  so.build_timeline =
      false;  // figures only (simulate() still analyzes a small Timeline for bubbles)
  so.calibration = in.calibration_or_null();
  for (size_t i = 0; i < points.size(); ++i) {
    Row r;
    r.swept = points[i].swept;
    r.error = points[i].error;
    try {
      if (r.error.empty()) r.summary = predict::simulate(points[i].config, so).summary;
    } catch (const std::exception& e) {
      // One point that cannot be simulated is a row of the sweep, not the end of it.
      if (points.size() == 1) throw UserError(where + ": " + e.what());
      r.error = e.what();
    }
    // One configuration that does not fit: what would (a sweep's rows are not each searched).
    if (points.size() == 1 && r.error.empty() && !r.summary.fits) {
      if (r.summary.simulator_seconds > 1)  // up to 15 more simulations: say so before them
        std::fprintf(stderr,
                     "predict: it does not fit; simulating it with other recomputation and ZeRO "
                     "stages (%.0f s each)\n",
                     r.summary.simulator_seconds);
      r.fit = predict::fit_alternatives(points[i].config, so);
    }
    rows.push_back(std::move(r));
    progress(i + 1, points.size());
  }
  // Both written before either replaces its target: a failed plot leaves the old CSV too.
  std::vector<traces::AtomicFile> outputs;
  if (!a.csv.empty() && a.csv != "-") outputs.emplace_back(a.csv).write(csv_of(rows));
  if (!a.plot.empty()) outputs.emplace_back(a.plot).write(predict::render_svg(chart_of(rows)));
  for (traces::AtomicFile& f : outputs) f.sync();
  for (traces::AtomicFile& f : outputs) f.commit();
  if (a.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const Row& r : rows) {
      nlohmann::json o =
          r.error.empty() ? predict::to_json(r.summary) : nlohmann::json{{"error", r.error}};
      for (const auto& [k, v] : r.swept) o["sweep"][k] = v;
      if (r.fit) o["would_fit"] = predict::to_json(*r.fit);
      out.push_back(o);
    }
    std::printf("%s\n", json_text(points.size() == 1 ? out.front() : out).c_str());
    return;
  }
  if (a.csv == "-") {
    std::fputs(csv_of(rows).c_str(), stdout);
    return;
  }
  print_table(rows);
  std::vector<const predict::PredictConfig*> configs;
  for (const predict::SweepPoint& p : points)
    if (p.error.empty()) configs.push_back(&p.config);
  std::fputs(uneven_layer_splits(configs).c_str(), stdout);
  std::fputs(settings_that_do_little(configs).c_str(), stdout);
  std::fputs(schedules_the_framework_lacks(configs).c_str(), stdout);
  if (so.calibration != nullptr) {
    std::printf(
        "no range (a..b) with --calibration: the development set's errors are of predictions "
        "from the catalog's figures, which the calibration's fitted rates replace\n");
    const auto& phases = so.calibration->phases;
    if (std::none_of(phases.begin(), phases.end(),
                     [](const cost::PhaseFit& f) { return f.fitted(); }))
      std::printf(
          "the calibration fits no compute phase: compute is priced from the catalog's figures, "
          "and only its links from the calibration\n");
    std::fputs(collective_fit_beyond_its_groups(*so.calibration, configs).c_str(), stdout);
  }
  if (a.breakdown) print_breakdowns(rows);
}

// --schedule of --from-trace: a pipeline family the replay runs, by meshscope's name or torch's
// class name (Schedule1F1B, or 1F1B as torch's own fixture folders say); made meshscope's name.
CLI::Validator replay_family_check() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        std::string names;
        for (size_t i = 0; i < schedule::kFamilies.size(); ++i) {
          const schedule::FamilyInfo& f = schedule::kFamilies[i];
          if (f.pp_one_only || static_cast<schedule::Family>(i) == schedule::Family::kNaive)
            continue;
          const std::string torch(f.torch_class);
          if (v == f.name || (!torch.empty() && (v == torch || "Schedule" + v == torch))) {
            v = std::string(f.name);
            return "";
          }
          names += (names.empty() ? "" : ", ") + std::string(f.name);
        }
        return "'" + v + "' is not a pipeline family the replay runs (one of " + names +
               "; or torch's class name, as Schedule1F1B or 1F1B)";
      },
      "FAMILY");
}

}  // namespace

void add_predict_command(CLI::App& app) {
  auto args = std::make_shared<PredictArgs>();
  CLI::App* cmd = app.add_subcommand(
      "predict",
      "Predict step time, tokens/s, TFLOP/s per GPU, MFU, bubble fraction and memory of a "
      "configuration by simulation; lists in place of values sweep them; --search finds the "
      "fastest mesh that fits. Config keys: docs/CONFIG.md.");
  add_sim_input_options(*cmd, args->input, "configuration JSON (lists sweep)");
  cmd->add_flag(
      "--json", args->json,
      "print JSON (step_time_s, tokens_per_s, tflops_per_gpu, mfu, "
      "bubble_fraction, peak_memory_bytes, fits, ...; for one configuration that does not "
      "fit, would_fit: the recomputation and ZeRO stages that would; every key: docs/OUTPUT.md)");
  cmd->add_option("--csv", args->csv,
                  "also write the rows as CSV (with --search: the ranked meshes); - prints them "
                  "on stdout in place of the table")
      ->check(output_file_check(DashMeans::kStdout));
  cmd->add_option("--plot", args->plot, "also write an SVG chart of throughput over the sweep")
      ->check(output_file_check());
  cmd->add_flag("--breakdown", args->breakdown,
                "also print where the step's time goes on the busiest device: GEMMs, attention, "
                "norms, elementwise passes, recomputation, exposed tp collectives, the optimizer "
                "step, idle; the data-parallel collectives' time on the links and what the step "
                "pays for them (JSON: always, as \"breakdown\"); and what holds the fullest "
                "device's memory: parameters, gradients, optimizer state (each with its bytes a "
                "parameter and the devices it is sharded over), activations (JSON: "
                "\"memory_per_stage\", \"state_bytes_per_parameter\", \"state_shards\")");
  cmd->add_flag("--sensitivity", args->sensitivity,
                "instead of the table: the step time with each figure of the hardware catalog "
                "entry (GEMM and attention rates, memory and link bandwidths, latencies) and of "
                "the framework profile (elementwise passes, extra memory passes, loss bytes) "
                "moved down and up alone, the largest change first, with the source or "
                "assumption each figure rests on (JSON with --json)");
  cmd->add_option("--sensitivity-percent", args->sensitivity_percent,
                  "how far --sensitivity moves each figure, in percent of itself")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 50.0))  // NaN passes a range: refused in run_sensitivity
      ->needs("--sensitivity");
  cmd->add_flag("--search", args->search, "search dp x pp x tp, microbatch size and schedule");
  // An option of one mode given without it would be ignored, and the user would read the figures
  // of something else (a gpipe prediction that is the config's own schedule): refuse instead.
  cmd->add_option("--gpus", args->gpus, "GPU budget for --search")
      ->check(CLI::Range(int64_t{1}, predict::kMaxSearchGpus))
      ->needs("--search");
  cmd->add_option("--top", args->top, "rows --search prints")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20))
      ->needs("--search");
  // A measured torch pipelining job instead of a config (cli/predict_from_trace.cpp).
  cmd->get_option("--config")->required(false);
  cmd->add_option("--from-trace", args->trace.trace,
                  "replay a torch.distributed.pipelining job from its traces: the schedule that "
                  "ran (with its error against the measured step), then the alternatives")
      ->type_name("DIR")
      ->check(input_path_check())
      ->excludes("--config");
  cmd->add_option("--schedule", args->trace.schedule,
                  "with --from-trace: only this alternative family (meshscope's name, or torch's "
                  "class: Schedule1F1B or 1F1B)")
      ->transform(replay_family_check())
      ->needs("--from-trace");
  cmd->add_option("--microbatches", args->trace.microbatches,
                  "with --from-trace: microbatches of the alternatives (default: the run's)")
      ->check(CLI::Range(1, 1 << 20))
      ->needs("--from-trace");
  cmd->add_option("--pp", args->trace.pp,
                  "with --from-trace: pipeline ranks of the alternatives (default: the run's)")
      ->check(CLI::Range(1, 1 << 16))
      ->needs("--from-trace");
  cmd->callback([args] { run(*args); });
}

}  // namespace meshscope::cli
