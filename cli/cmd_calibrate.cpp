// `meshscope calibrate TRACE... -o calib.json [--hardware NAME]`: fit per-phase compute rates and
// link alpha/beta from profiled traces, for `simulate`/`predict --calibration`.
// `meshscope calibrate --gemm-rates FILE --hardware NAME`: how far measured GEMM rates (what
// scripts/gpu-check.sh measures on a GPU, or the GEMMs of a Kineto trace recorded with shapes) are
// from the entry's GEMM model (gemm_table_fit.h).
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/output_path.h"
#include "sim/cost/calibration.h"
#include "sim/cost/fit.h"
#include "sim/cost/gemm_table_fit.h"
#include "sim/cost/hardware.h"
#include "sim/predict/calibrate_model.h"
#include "sim/predict/config.h"
#include "traces/import/load_trace.h"
#include "traces/import/trace_gemms.h"

namespace meshscope::cli {
namespace {

struct CalibrateArgs {
  std::vector<std::string> traces;
  std::string out;
  std::string hardware = "cpu-local";
  std::string precision = "fp32";
  std::string gemm_rates;  // a measured GEMM table to check against --hardware's GEMM model
  std::string compare;     // rates of other shapes, set beside the model with that table's fit
  bool json = false;
};

// A Kineto trace (JSON, or gzip of it) rather than a CSV table: its first byte that is not white
// space, among the first 4 KiB of a regular file (anything else goes to the table's reader, which
// says what is wrong with it).
bool is_trace_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  std::ifstream in(path, std::ios::binary);
  char c = 0;
  for (int i = 0; i < 4096 && in.get(c); ++i)
    if (!std::isspace(static_cast<unsigned char>(c))) return c == '{' || c == '[' || c == '\x1f';
  return false;
}

// The GEMMs of a Kineto trace recorded with shapes, in bf16 or fp16 (the precisions the GEMM model
// is checked in), one row per shape at its summed FLOPs over its summed kernel time.
std::vector<cost::MeasuredGemm> rates_of_trace(const std::string& path) {
  const traces::TraceGemms t = traces::read_trace_gemms(path);
  std::map<std::array<int64_t, 4>, std::pair<double, double>> by_shape;  // flops, seconds
  int64_t other_dtype = 0;
  for (const traces::TraceGemm& g : t.gemms) {
    if (g.dtype != "c10::BFloat16" && g.dtype != "c10::Half") {
      ++other_dtype;
      continue;
    }
    auto& [flops, seconds] = by_shape[{g.b, g.m, g.n, g.k}];
    flops += g.flops();
    seconds += g.kernel_s;
  }
  std::fprintf(stderr,
               "%s: %zu GEMM ops with shapes and kernels, %zu shapes in bf16 or fp16 (left out: "
               "%lld of other dtypes, %lld without shapes, %lld without kernels)\n",
               path.c_str(), t.gemms.size(), by_shape.size(), static_cast<long long>(other_dtype),
               static_cast<long long>(t.without_shapes), static_cast<long long>(t.without_kernels));
  if (by_shape.empty())
    throw UserError(
        path +
        ": no bf16 or fp16 GEMM (aten::mm, addmm, bmm, baddbmm) with shapes and "
        "kernels in this trace" +
        (t.record_shapes ? std::string() : std::string("; profile with record_shapes=True")));
  std::vector<cost::MeasuredGemm> rows;
  for (const auto& [shape, fs] : by_shape)
    rows.push_back({shape[0], shape[1], shape[2], shape[3], fs.first / fs.second});
  return rows;
}

std::vector<cost::MeasuredGemm> read_rates(const std::string& path) {
  try {
    // A relative path is looked for as --config's is: the README's fixture path from anywhere.
    const std::string resolved = predict::resolve_config_path(path);
    if (is_trace_file(resolved)) return rates_of_trace(resolved);
    return cost::read_gemm_table(resolved);
  } catch (const std::runtime_error& e) {
    throw UserError(e.what());
  }
}

// --compare: each row of another table of the same run against the model with the fit of
// --gemm-rates (shapes the fit did not see: the development rows' own GEMMs in gpu-check.sh).
nlohmann::json compare_rates(const cost::Hardware& hw, const cost::GemmTableFit& fit,
                             const std::string& path) {
  const std::vector<cost::MeasuredGemm> rows = read_rates(path);
  nlohmann::json out = {{"file", path}, {"rows", nlohmann::json::array()}};
  double sum = 0;
  for (const cost::MeasuredGemm& r : rows) {
    const double model = cost::fitted_rate(hw, r, fit);
    out["rows"].push_back({{"shape", {r.b, r.m, r.n, r.k}},
                           {"measured_flops_per_s", r.flops_per_s},
                           {"model_flops_per_s", model},
                           {"model_over_measured", model / r.flops_per_s}});
    sum += std::log(model / r.flops_per_s) * std::log(model / r.flops_per_s);
  }
  out["rms"] = std::sqrt(sum / static_cast<double>(rows.size()));
  return out;
}

void run_gemm_rates(const CalibrateArgs& a) {
  const cost::Hardware hw = cost::find_hardware(a.hardware);
  const std::vector<cost::MeasuredGemm> rows = read_rates(a.gemm_rates);
  const cost::GemmTableFit fit = cost::fit_gemm_table(hw, rows);
  const cost::KHalfScan scan = cost::scan_k_half(hw, rows);
  const cost::MeasuredGemm& best =
      *std::max_element(rows.begin(), rows.end(),
                        [](const auto& x, const auto& y) { return x.flops_per_s < y.flops_per_s; });
  const double peak = hw.peak(cost::Precision::kBf16);
  // A scale at the end of its range matched nothing: the table is of other hardware.
  const bool scale_at_bound = fit.scale < 0.21 || fit.scale > 4.9;
  std::optional<nlohmann::json> compared;
  if (!a.compare.empty()) compared = compare_rates(hw, fit, a.compare);
  if (a.json) {
    nlohmann::json j = {{"file", a.gemm_rates},
                        {"hardware", hw.name},
                        {"shapes", rows.size()},
                        {"rms", fit.rms},
                        {"scale", fit.scale},
                        {"scale_at_bound", scale_at_bound},
                        {"fixed_s", fit.fixed_s},
                        {"k_half", hw.efficiency.k_half},
                        {"best_k_half", scan.best_k_half},
                        {"best_k_half_rms", scan.best_rms},
                        {"best_flops_per_s", best.flops_per_s},
                        {"best_shape", {best.b, best.m, best.n, best.k}}};
    if (compared) j["compare"] = *compared;
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  std::printf(
      "GEMM rates: %zu shapes from %s against %s's GEMM model (burst: no sustained share)\n",
      rows.size(), a.gemm_rates.c_str(), hw.name.c_str());
  std::printf(
      "  shape model within %.2f%% rms, its rate scaled by %.3f and %.2f us a kernel added\n",
      100 * fit.rms, fit.scale, fit.fixed_s * 1e6);
  if (scale_at_bound)
    std::printf(
        "  the rate scale reached the end of its range (0.2 to 5): these rates are not of "
        "%s's kind\n",
        hw.name.c_str());
  std::printf(
      "  k_half: the entry's %.0f gives that; the best of 0, 16, ..., 512 is %.0f (%.2f%%)\n",
      hw.efficiency.k_half, scan.best_k_half, 100 * scan.best_rms);
  std::printf(
      "  fastest: %.1f TFLOP/s (%.1f%% of the entry's bf16 peak) at b %lld, m %lld, n %lld, "
      "k %lld\n",
      best.flops_per_s / 1e12, peak > 0 ? 100 * best.flops_per_s / peak : 0.0,
      static_cast<long long>(best.b), static_cast<long long>(best.m),
      static_cast<long long>(best.n), static_cast<long long>(best.k));
  if (!compared) return;
  std::printf("%s: %zu shapes against the model with that fit, within %.2f%% rms\n",
              a.compare.c_str(), (*compared)["rows"].size(),
              100 * (*compared)["rms"].get<double>());
  for (const nlohmann::json& r : (*compared)["rows"])
    std::printf("  b %lld, m %lld, n %lld, k %lld: measured %.1f, model %.1f TFLOP/s (x%.3f)\n",
                r["shape"][0].get<long long>(), r["shape"][1].get<long long>(),
                r["shape"][2].get<long long>(), r["shape"][3].get<long long>(),
                r["measured_flops_per_s"].get<double>() / 1e12,
                r["model_flops_per_s"].get<double>() / 1e12,
                r["model_over_measured"].get<double>());
}

void run(const CalibrateArgs& a) {
  if (!a.gemm_rates.empty()) {
    run_gemm_rates(a);
    return;
  }
  if (a.traces.empty()) throw UserError("calibrate needs profiled traces (or --gemm-rates FILE)");
  if (a.out.empty()) throw UserError("calibrate needs -o/--out FILE for the calibration");
  const auto precision = cost::parse_precision(a.precision);
  if (!precision)
    throw UserError("--precision: '" + a.precision + "' is not bf16, fp16, fp32 or tf32");
  const cost::Hardware hw = cost::find_hardware(a.hardware);
  std::vector<traces::Timeline> timelines;
  for (const std::string& p : a.traces) {
    std::error_code ec;
    if (!std::filesystem::exists(p, ec)) throw UserError(p + ": no such file");
    timelines.push_back(traces::load_trace(p));
    // A CPU profile fitted as a GPU (or the reverse) gives rates of one device for another.
    // meshscope's runs say where they ran (Timeline::run); an imported Kineto trace names its
    // process-group backend (distributedInfo.backend, "gloo" or "nccl").
    const traces::Timeline& t = timelines.back();
    const traces::RunSource source = t.run.source;
    std::optional<bool> cpu_trace;
    std::string where(traces::name(source));
    if (source == traces::RunSource::kCpu || source == traces::RunSource::kCuda ||
        source == traces::RunSource::kCudaVirtual) {
      cpu_trace = source == traces::RunSource::kCpu;
    } else if (const auto backend = t.metadata.find("backend"); backend != t.metadata.end()) {
      cpu_trace = backend->second.rfind("cpu", 0) == 0;
      where = backend->second;
    }
    if (cpu_trace && *cpu_trace != (hw.kind == "cpu"))
      throw UserError(p + ": ran on the " + where + " backend, but --hardware " + hw.name +
                      " is a " + hw.kind + (*cpu_trace ? " (use --hardware cpu-local)" : ""));
  }
  std::vector<const traces::Timeline*> ptrs;
  for (const traces::Timeline& t : timelines) ptrs.push_back(&t);
  int rebuilt = 0;
  cost::Calibration c = predict::calibrate_against_model(ptrs, hw, *precision, &rebuilt);
  c.traces = a.traces;
  cost::save_calibration(c, a.out);
  std::printf(
      "calibration for %s from %zu trace(s), %d with a workload rebuilt for a fit against "
      "the op model:\n",
      hw.name.c_str(), a.traces.size(), rebuilt);
  for (size_t i = 0; i < c.phases.size(); ++i) {
    const cost::PhaseFit& f = c.phases[i];
    if (f.samples == 0) continue;
    std::printf("  %-12s %8.3f GFLOP/s (%.1f%% of peak)",
                std::string(traces::kPhaseNames[i]).c_str(), f.flops_per_s / 1e9,
                100 * f.efficiency);
    if (f.model_scale > 0) std::printf(", %.2f x the op model", f.model_scale);
    std::printf(" + %.1f us per span, %d spans, rms error %.1f%%\n", f.overhead_ns / 1e3, f.samples,
                100 * f.rms_error);
  }
  auto link = [](const char* what, const cost::LinkFit& l) {
    if (l.samples == 0) {
      std::printf("  %-12s no spans with bytes\n", what);
      return;
    }
    std::printf("  %-12s alpha %.1f us, %.3f GB/s, %d spans, rms error %.1f%%\n", what,
                l.alpha_ns / 1e3, l.bandwidth_bytes_per_s / 1e9, l.samples, 100 * l.rms_error);
  };
  link("p2p", c.p2p);
  link("collective", c.collective);
  link("all_to_all", c.all_to_all);
  std::printf("written: %s\n", a.out.c_str());
}

}  // namespace

void add_calibrate_command(CLI::App& app) {
  auto args = std::make_shared<CalibrateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate",
      "Fit compute rates per phase and link alpha/beta from profiled traces (meshscope run --out, "
      "or imported profiles) into a calibration file for simulate/predict --calibration.");
  cmd->add_option("TRACE", args->traces, "profiled traces");
  cmd->add_option("-o,--out", args->out, "calibration JSON to write (required with traces)")
      ->check(output_file_check());
  cmd->add_option("--hardware", args->hardware, "catalog entry the traces ran on")
      ->capture_default_str();
  cmd->add_option("--precision", args->precision, "precision the traces computed in")
      ->capture_default_str();
  cmd->add_option("--gemm-rates", args->gemm_rates,
                  "instead of traces: a CSV of measured GEMM rates (b,m,n,k,flops_per_s, as "
                  "meshscope-kernel-check --gemm-rates writes on a GPU), or a PyTorch profiler "
                  "(Kineto) trace recorded with record_shapes=True, whose bf16/fp16 aten::mm, "
                  "addmm, bmm and baddbmm ops give one rate per shape (their FLOPs over their "
                  "kernels' time), to check against the --hardware entry's GEMM model: its error "
                  "once a rate scale and a time per kernel are fitted, and the k_half that fits "
                  "best")
      ->type_name("FILE")
      ->excludes("TRACE")
      ->excludes("--out")
      ->excludes("--precision")
      ->needs("--hardware");  // calibrate's default, cpu-local, is no GPU's table
  cmd->add_option("--compare", args->compare,
                  "with --gemm-rates: a CSV (or trace) of measured rates of other shapes from the "
                  "same run, "
                  "each set beside the model's rate with the fit --gemm-rates found (its rate "
                  "scale and time per kernel)")
      ->type_name("FILE")
      ->needs("--gemm-rates");
  cmd->add_flag("--json", args->json, "with --gemm-rates: print the check as JSON")
      ->needs("--gemm-rates");
  cmd->callback([args] { run(*args); });
}

}  // namespace meshscope::cli
