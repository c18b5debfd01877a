#include "sim/cost/gemm_table_fit.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include "kernels/cpu/csv_lines.h"
#include "sim/cost/compute_model.h"
#include "traces/byte_size.h"
#include "traces/printable.h"

namespace meshscope::cost {
namespace {

[[noreturn]] void bad(const std::string& path, int line, const std::string& why) {
  throw std::runtime_error(path + ":" + std::to_string(line) + ": " + why);
}

// The whole field, spaces around it allowed: "4096x" or "" is not a number.
bool whole_integer(const std::string& f, int64_t& out) {
  const size_t a = f.find_first_not_of(' '), b = f.find_last_not_of(' ');
  if (a == std::string::npos) return false;
  const char* end = f.data() + b + 1;
  const auto [at, ec] = std::from_chars(f.data() + a, end, out);
  return ec == std::errc() && at == end;
}
bool whole_number(const std::string& f, double& out) {
  const size_t a = f.find_first_not_of(' ');
  if (a == std::string::npos) return false;
  char* end = nullptr;
  out = std::strtod(f.c_str() + a, &end);
  return end != f.c_str() + a && f.find_first_not_of(' ', end - f.c_str()) == std::string::npos;
}

// Minimises f over [lo, hi] (f unimodal there) by golden-section search.
template <class F>
double golden_min(F f, double lo, double hi) {
  const double r = (std::sqrt(5.0) - 1) / 2;
  for (int i = 0; i < 60; ++i) {
    const double c = hi - r * (hi - lo), d = lo + r * (hi - lo);
    if (f(c) < f(d)) {
      hi = d;
    } else {
      lo = c;
    }
  }
  return (lo + hi) / 2;
}

// One shape's model times at full scale and no fixed time: compute at the shape function's rate
// and the memory traffic of its bf16 operands, and its FLOPs.
struct ModelTimes {
  double compute_s, memory_s, flops;
};
ModelTimes model_times(const Hardware& hw, const ComputeModel& cm, const MeasuredGemm& r) {
  const double f = 2.0 * static_cast<double>(r.b) * static_cast<double>(r.m) *
                   static_cast<double>(r.n) * static_cast<double>(r.k);
  const double elements =
      static_cast<double>(r.b) * (static_cast<double>(r.m) * static_cast<double>(r.k) +
                                  static_cast<double>(r.k) * static_cast<double>(r.n) +
                                  static_cast<double>(r.m) * static_cast<double>(r.n));
  return {f / (cm.peak_flops() * gemm_efficiency(hw, r.m, r.n, r.k, r.b)),
          cm.stream_seconds(2.0 * elements),  // bf16 in and out
          f};
}

double fitted_time(const ModelTimes& t, const GemmTableFit& fit) {
  return std::max(t.compute_s / fit.scale, t.memory_s) + fit.fixed_s;
}

}  // namespace

std::vector<MeasuredGemm> read_gemm_table(const std::string& path) {
  // A regular file of bounded size: /dev/zero, a FIFO or a 20 GB file is refused before a line of
  // it is read into memory (a table of 100,000 shapes is about 6 MB). The lines are read by the
  // reader meshscope-kernel-check's shape files share (its rates are what this reads back).
  std::vector<MeasuredGemm> rows;
  for (const kernels::CsvLine& l : kernels::read_csv_lines(
           path, {.header = "b,m,n,k,flops_per_s",
                 .max_mib = 16,
                 .what = "a table of GEMM rates",
                 .header_wanted = "the header 'b,m,n,k,flops_per_s'",
                 .quote = [](const std::string& text) { return traces::printable(text, 60); }})) {
    const int line = l.number;
    const std::vector<std::string>& fields = l.fields;
    MeasuredGemm r;
    if (!whole_integer(fields[0], r.b) || !whole_integer(fields[1], r.m) ||
        !whole_integer(fields[2], r.n) || !whole_integer(fields[3], r.k) ||
        !whole_number(fields[4], r.flops_per_s))
      bad(path, line, "want b,m,n,k,flops_per_s numbers");
    if (r.b < 1 || r.m < 1 || r.n < 1 || r.k < 1) bad(path, line, "sizes must be 1 or more");
    // Operands no device holds (m = n = k = 2^31 - 1: 2.8e19 bytes) were measured on none, and
    // one such row had moved the fitted scale from 0.93 to 0.54 without a word.
    const double operand_bytes = 2.0 * static_cast<double>(r.b) *
                                 (static_cast<double>(r.m) * static_cast<double>(r.k) +
                                  static_cast<double>(r.k) * static_cast<double>(r.n) +
                                  static_cast<double>(r.m) * static_cast<double>(r.n));
    if (operand_bytes > ::meshscope::cost::kMaxBytes)
      bad(path, line,
          "its bf16 operands would take " + traces::format_bytes(operand_bytes) +
              ", more than any device holds (1e15 bytes, sim/cost/hardware.h): no measured GEMM");
    if (!(r.flops_per_s > 0) || !std::isfinite(r.flops_per_s))
      bad(path, line, "flops_per_s must be a positive number");
    rows.push_back(r);
  }
  if (rows.empty()) throw std::runtime_error(path + ": no rows");
  return rows;
}

Hardware fp8_gemm_view(const Hardware& hw) {
  if (hw.peak_fp8 <= 0 || hw.efficiency.gemm_fp8_max <= 0)
    throw std::invalid_argument(hw.name + " has no FP8 rate (its catalog entry's peak_flops.fp8)");
  Hardware v = hw;
  v.peak_flops[static_cast<size_t>(Precision::kBf16)] = hw.peak_fp8;
  v.efficiency.gemm_max = hw.efficiency.gemm_fp8_max;
  v.efficiency.k_half = hw.efficiency.fp8_k_half;
  return v;
}

GemmTableFit fit_gemm_table(const Hardware& hw, const std::vector<MeasuredGemm>& rows) {
  const ComputeModel cm(hw, Precision::kBf16);
  std::vector<ModelTimes> times;
  for (const MeasuredGemm& r : rows) times.push_back(model_times(hw, cm, r));
  auto rms = [&](double scale, double fixed_s) {
    double sum = 0;
    for (size_t i = 0; i < rows.size(); ++i) {
      const double t = fitted_time(times[i], {0, scale, fixed_s});
      const double e = std::log(times[i].flops / t / rows[i].flops_per_s);
      sum += e * e;
    }
    return std::sqrt(sum / static_cast<double>(rows.size()));
  };
  GemmTableFit fit;
  for (int round = 0; round < 8; ++round) {
    fit.scale = golden_min([&](double s) { return rms(s, fit.fixed_s); }, 0.2, 5);
    fit.fixed_s = golden_min([&](double t) { return rms(fit.scale, t); }, 0, 1e-3);
  }
  fit.rms = rms(fit.scale, fit.fixed_s);
  return fit;
}

double fitted_rate(const Hardware& hw, const MeasuredGemm& shape, const GemmTableFit& fit) {
  const ComputeModel cm(hw, Precision::kBf16);
  const ModelTimes t = model_times(hw, cm, shape);
  return t.flops / fitted_time(t, fit);
}

KHalfScan scan_k_half(const Hardware& hw, const std::vector<MeasuredGemm>& rows, double step,
                      double max, const std::function<void(size_t, size_t)>& progress) {
  KHalfScan scan{0, 1e300};
  const auto count = static_cast<size_t>(max / step) + 1;
  for (size_t i = 0; i < count; ++i) {
    const double k_half = static_cast<double>(i) * step;
    Hardware h = hw;
    h.efficiency.k_half = k_half;
    const double r = fit_gemm_table(h, rows).rms;
    if (r < scan.best_rms) scan = {k_half, r};
    if (progress) progress(i + 1, count);
  }
  return scan;
}

}  // namespace meshscope::cost
