// print_table and print_breakdowns, and the notes under the table that its rows call for.
#include "cli/predict_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "cli/number_text.h"

namespace meshscope::cli {
namespace {

// Bytes as the table prints them: "74.3 GiB".
std::string gib(double bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f GiB", bytes / (1024.0 * 1024 * 1024));
  return b;
}

// A synchronous run computes at its slowest GPU's rate (catalog sustained_spread): how far below
// the mean, per hardware, at the fewest and the most GPUs of the rows.
void print_slowest_gpu(const std::vector<predict::SweepRow>& rows) {
  std::map<std::string, std::pair<const predict::SweepRow*, const predict::SweepRow*>> spread;
  for (const predict::SweepRow& r : rows) {
    if (!r.error.empty() || r.summary.slowest_gpu_share >= 1) continue;
    const auto it = spread.try_emplace(r.summary.hardware, &r, &r).first;
    if (r.summary.gpus < it->second.first->summary.gpus) it->second.first = &r;
    if (r.summary.gpus > it->second.second->summary.gpus) it->second.second = &r;
  }
  for (const auto& [hardware, ends] : spread) {
    const auto at = [](const predict::SweepRow* r, const char* what) {
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
std::string rows_label(const std::vector<const predict::SweepRow*>& rows) {
  if (rows.size() > 4) return std::to_string(rows.size()) + " rows";
  std::string label;
  for (const predict::SweepRow* r : rows) {
    std::string values;
    for (const auto& [key, value] : r->swept) values += (values.empty() ? "" : " ") + value;
    label += (label.empty() ? "" : ", ") + values;
  }
  return label;
}

// What the ranges in brackets are, once per distinct basis, in the order the rows first use them;
// where the rows' ranges come from more than one basis (a sweep over GPUs or profiles), each note
// names the rows it speaks for.
void print_range_bases(const std::vector<predict::SweepRow>& rows) {
  std::vector<std::pair<const predict::SweepRow*, std::vector<const predict::SweepRow*>>>
      bases;  // first row, its rows
  for (const predict::SweepRow& r : rows) {
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

// "fits" leaves out the allocator's cache, NCCL's buffers and the CUDA context: against the one
// published measured peak (torchtitan's Llama 3.1 8B on 8 and 128 H100s), the model is 12.5% and
// 13.4% under (docs/ACCURACY.md, "Measured peaks"). A peak within that of the GPU's memory fits
// "tight", so that a row that fits by a few GiB is not read as room to spare.
constexpr double kMeasuredUnder = 0.125;
bool fits_tight(const predict::Summary& s) {
  return s.fits &&
         static_cast<double>(s.peak_memory_bytes) > (1 - kMeasuredUnder) * s.memory_capacity_bytes;
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

}  // namespace

void print_table(const std::vector<predict::SweepRow>& rows) {
  std::vector<std::string> header;
  const bool schedule_swept = predict::sweeps_schedule(rows);
  if (!rows.empty())
    for (const auto& [k, v] : rows.front().swept) header.push_back(k);
  for (const char* h : {"gpus", "mesh", "schedule", "step time", "tokens/s", "TFLOP/s/GPU", "MFU",
                        "bubble", "peak memory", "fits"})
    if (!(schedule_swept && std::string_view(h) == "schedule")) header.push_back(h);
  std::vector<std::vector<std::string>> cells;
  for (const predict::SweepRow& r : rows) {
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
      c.push_back(format_number("%.4g s", s.step_time_s) +
                  (range ? format_number(" (%.3g", s.step_time_s_low) +
                               format_number("..%.3g)", s.step_time_s_high)
                         : ""));
      c.push_back(format_number("%.4g", s.tokens_per_s) +
                  (range ? format_number(" (%.3g", s.tokens_per_s_low) +
                               format_number("..%.3g)", s.tokens_per_s_high)
                         : ""));
      // A CPU's rate is a small fraction of a TFLOP/s: its digits, not 0.0.
      c.push_back(tflops_text(s.tflops_per_gpu));
      c.push_back(mfu_percent_text(s.mfu) + (range ? format_number(" (%.1f", 100 * s.mfu_low) +
                                                         format_number("..%.1f)", 100 * s.mfu_high)
                                                   : ""));
      c.push_back(format_number("%.1f%%", 100 * s.bubble_fraction));
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
  for (const predict::SweepRow& r : rows)
    if (r.error.empty() && r.summary.range_beyond_seq) {
      std::printf(
          "beyond the range's runs: the longest sequence behind %s is %lld tokens; for longer ones "
          "the range is an extrapolation (docs/ACCURACY.md, held-back sets 5 and 6)\n",
          r.summary.range_basis.c_str(), static_cast<long long>(r.summary.range_max_seq));
      break;
    }
  for (const predict::SweepRow& r : rows)
    if (r.error.empty() && r.summary.range_without_fp8) {
      std::printf(
          "FP8: the range's runs are all BF16 ones; how FP8 runs fall around it is measured on "
          "NVIDIA's, held back (docs/ACCURACY.md item 50, set 9)\n");
      break;
    }
  // A model without a sequence (mlp, vgg) counts one token a sample: its tokens/s are samples
  // (images) per second, which the column's name does not say.
  for (const predict::SweepRow& r : rows)
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
  for (const predict::SweepRow& r : rows)
    if (r.error.empty() && r.summary.mfu > 1) {
      std::printf(
          "MFU over 100%%: MFU counts every FLOP against the options.precision peak; FP8 linears "
          "run at up to twice it (as NVIDIA's FP8 tables count it; docs/CONFIG.md, options.fp8)\n");
      break;
    }
  print_slowest_gpu(rows);
  if (std::any_of(rows.begin(), rows.end(), [](const predict::SweepRow& r) {
        return r.error.empty() && fits_tight(r.summary);
      }))
    std::printf(
        "fits tight: the peak is within 12.5%% of the GPU's memory; it leaves out the allocator's "
        "cache, NCCL's buffers and the CUDA context, and was 12.5-13.4%% under the one measured "
        "peak (docs/ACCURACY.md, \"Measured peaks\"): it may not fit\n");
  for (const predict::SweepRow& r : rows)
    if (r.error.empty() && !r.summary.fits) {
      std::printf(
          "fits NO: the predicted peak memory is above the GPU's memory (--breakdown: "
          "what holds it)\n");
      if (r.fit) std::printf("%s", predict::format_fit_alternatives(*r.fit, r.summary).c_str());
      break;
    }
}

void print_breakdowns(const std::vector<predict::SweepRow>& rows) {
  for (const predict::SweepRow& r : rows) {
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

}  // namespace meshscope::cli
