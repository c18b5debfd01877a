// `meshscope calibrate --gemm-rates FILE --hardware NAME`: how far measured GEMM rates are from a
// catalog entry's GEMM model (sim/cost/gemm_table_fit.h). FILE is a CSV table (what
// scripts/gpu-check.sh measures on a GPU with meshscope-kernel-check --gemm-rates, or OpenXLA's
// table), or a PyTorch profiler (Kineto) trace recorded with shapes, or a folder of them, whose
// GEMM ops give one rate per shape (traces/import/trace_gemms.h) and are listed by the GEMM time
// they took. --write-hardware writes the fit as a hardware file for predict.
#include "cli/calibrate_gemm_rates.h"
#include "cli/json_text.h"
#include "cli/read_progress.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cli/commands.h"
#include "cli/output_path.h"
#include "sim/cost/gemm_table_fit.h"
#include "sim/cost/hardware.h"
#include "sim/predict/config.h"
#include "traces/atomic_file.h"
#include "traces/import/byte_source.h"
#include "traces/import/trace_gemms.h"

namespace meshscope::cli {
namespace {

// What a regular file given to --gemm-rates holds, from its first bytes (the importer's magic
// numbers, else the first of its first 4 KiB that is not white space); anything but a trace or an
// SQLite file goes to the table's reader, which says what is wrong with it.
enum class RatesFile { kTable, kTrace, kSqlite };
RatesFile kind_of(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return RatesFile::kTable;
  std::ifstream in(path, std::ios::binary);
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  if (traces::importer::has_gzip_magic(head)) return RatesFile::kTrace;
  if (traces::importer::has_sqlite_magic(head)) return RatesFile::kSqlite;
  const size_t first = head.find_first_not_of(" \t\r\n");
  return first != std::string::npos && (head[first] == '{' || head[first] == '[')
             ? RatesFile::kTrace
             : RatesFile::kTable;
}

// One shape of a trace's GEMMs: its rate over every op of that shape, how many ran, how long.
struct TraceShape {
  cost::MeasuredGemm gemm;
  int64_t ops = 0;
  double seconds = 0;
};

// The GEMMs of Kineto traces recorded with shapes (one file, or every trace file of a folder: a
// job's ranks), in bf16 or fp16 (the precisions the GEMM model is checked in), one row per shape
// at its summed FLOPs over its summed kernel time.
std::vector<TraceShape> shapes_of_traces(const std::vector<std::string>& files,
                                         const std::string& where) {
  std::map<std::array<int64_t, 4>, TraceShape> by_shape;  // gemm.flops_per_s holds the FLOPs
  bool record_shapes = false;
  for (const std::string& path : files) {
    const traces::TraceGemms t =
        traces::read_trace_gemms(path, options_reporting_progress("calibrate"));
    record_shapes = record_shapes || t.record_shapes;
    int64_t other_dtype = 0;
    size_t shaped = 0;
    for (const traces::TraceGemm& g : t.gemms) {
      if (g.dtype != "c10::BFloat16" && g.dtype != "c10::Half") {
        ++other_dtype;
        continue;
      }
      TraceShape& s = by_shape[{g.b, g.m, g.n, g.k}];
      s.gemm = {g.b, g.m, g.n, g.k, s.gemm.flops_per_s + g.flops()};
      ++s.ops;
      s.seconds += g.kernel_s;
      ++shaped;
    }
    std::fprintf(stderr,
                 "%s: %zu GEMM ops with shapes and kernels, %zu in bf16 or fp16 (left out: %lld of "
                 "other dtypes, %lld without shapes, %lld without kernels)\n",
                 path.c_str(), t.gemms.size(), shaped, static_cast<long long>(other_dtype),
                 static_cast<long long>(t.without_shapes),
                 static_cast<long long>(t.without_kernels));
  }
  if (by_shape.empty())
    throw UserError(
        where +
        ": no bf16 or fp16 GEMM (aten::mm, addmm, bmm, baddbmm) with shapes and "
        "kernels in " +
        (files.size() > 1 ? "these traces" : "this trace") +
        (record_shapes ? std::string() : std::string("; profile with record_shapes=True")));
  // A shape whose kernels all lasted 0 (a trace rounding them to whole microseconds) has no rate:
  // it is left out, or its infinite rate would make the fit meaningless.
  std::vector<TraceShape> shapes;
  int64_t timeless = 0;
  for (auto& [key, s] : by_shape) {
    if (!(s.seconds > 0)) {
      timeless += s.ops;
      continue;
    }
    s.gemm.flops_per_s /= s.seconds;
    shapes.push_back(s);
  }
  if (timeless > 0)
    std::fprintf(stderr,
                 "%s: %lld GEMM ops left out: their shape's kernels lasted 0 in all (a duration "
                 "rounded to 0?), so it has no rate\n",
                 where.c_str(), static_cast<long long>(timeless));
  if (shapes.empty())
    throw UserError(where + ": every GEMM shape's kernels lasted 0: no rate to fit");
  return shapes;
}

// The trace files of a folder (JSON or gzip, by their first byte), sorted; none is an error.
std::vector<std::string> traces_in(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (kind_of(e.path().string()) == RatesFile::kTrace) files.push_back(e.path().string());
  if (ec) throw UserError(dir + ": cannot list the folder: " + ec.message());
  if (files.empty())
    throw UserError(dir + ": no trace files (Kineto JSON, or .json.gz) in this folder");
  std::sort(files.begin(), files.end());
  return files;
}

// A table (CSV), a trace or a folder of traces; `shapes` is filled for traces and left empty for a
// table.
std::vector<cost::MeasuredGemm> read_rates(const std::string& path,
                                           std::vector<TraceShape>* shapes = nullptr) {
  try {
    // A relative path is looked for as --config's is: the README's fixture path from anywhere.
    const std::string resolved = predict::resolve_config_path(path);
    std::error_code ec;
    std::vector<std::string> files;
    if (std::filesystem::is_directory(resolved, ec)) {
      files = traces_in(resolved);
    } else {
      switch (kind_of(resolved)) {
        case RatesFile::kTable:
          return cost::read_gemm_table(resolved);
        case RatesFile::kSqlite:
          throw UserError(resolved +
                          ": an SQLite file (an Nsight Systems export?): GEMM rates are read from "
                          "a CSV table or a PyTorch profiler (Kineto JSON) trace recorded with "
                          "shapes");
        case RatesFile::kTrace:
          files = {resolved};
          break;
      }
    }
    std::vector<TraceShape> found = shapes_of_traces(files, resolved);
    std::vector<cost::MeasuredGemm> rows;
    for (const TraceShape& s : found) rows.push_back(s.gemm);
    if (shapes != nullptr) *shapes = std::move(found);
    return rows;
  } catch (const std::runtime_error& e) {
    throw UserError(e.what());
  }
}

// A trace's shapes by the GEMM time they took, the most first, each beside the model with the fit.
nlohmann::json trace_shapes(const cost::Hardware& hw, const cost::GemmTableFit& fit,
                            std::vector<TraceShape> shapes) {
  std::sort(shapes.begin(), shapes.end(),
            [](const TraceShape& a, const TraceShape& b) { return a.seconds > b.seconds; });
  double total = 0;
  for (const TraceShape& s : shapes) total += s.seconds;
  nlohmann::json out = nlohmann::json::array();
  for (const TraceShape& s : shapes) {
    const double model = cost::fitted_rate(hw, s.gemm, fit);
    out.push_back({{"shape", {s.gemm.b, s.gemm.m, s.gemm.n, s.gemm.k}},
                   {"ops", s.ops},
                   {"kernel_s", s.seconds},
                   {"share", s.seconds / total},
                   {"measured_flops_per_s", s.gemm.flops_per_s},
                   {"model_flops_per_s", model},
                   {"model_over_measured", model / s.gemm.flops_per_s}});
  }
  return out;
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

// --held-rates: GEMMs held busy at the power limit, each over the entry's burst rate for its shape
// (its GEMM model without the sustained share) and over that rate with the fit's scale: the
// sustained share each measures, and their medians (docs/ACCURACY.md items 8 and 52).
struct HeldShares {
  nlohmann::json json;
  double vs_entry = 1, vs_fit = 1;
};
HeldShares held_shares(const cost::Hardware& hw, const cost::GemmTableFit& fit,
                       const std::string& path) {
  std::vector<TraceShape> traced;
  const std::vector<cost::MeasuredGemm> rows = read_rates(path, &traced);
  if (!traced.empty())
    throw UserError(path +
                    ": --held-rates reads a table of GEMMs held busy (b,m,n,k,flops_per_s); a "
                    "trace's GEMMs ran among the other kernels of a step");
  // The burst rate with the fit: its scale as --write-hardware writes it (a ceiling of at most 1)
  // and no time per kernel (the held calls run back to back, 1 ms or more each).
  const double gemm_max = hw.efficiency.gemm_max;
  const cost::GemmTableFit scaled{0, std::min(1.0, gemm_max * fit.scale) / gemm_max, 0};
  HeldShares out;
  out.json = {{"file", path}, {"rows", nlohmann::json::array()}};
  std::vector<double> vs_entry, vs_fit;
  for (const cost::MeasuredGemm& r : rows) {
    const double entry = cost::fitted_rate(hw, r, cost::GemmTableFit{});
    const double fitted = cost::fitted_rate(hw, r, scaled);
    vs_entry.push_back(r.flops_per_s / entry);
    vs_fit.push_back(r.flops_per_s / fitted);
    out.json["rows"].push_back({{"shape", {r.b, r.m, r.n, r.k}},
                                {"held_flops_per_s", r.flops_per_s},
                                {"entry_burst_flops_per_s", entry},
                                {"fitted_burst_flops_per_s", fitted},
                                {"sustained_vs_entry", vs_entry.back()},
                                {"sustained_vs_fit", vs_fit.back()}});
  }
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  };
  out.vs_entry = median(vs_entry);
  out.vs_fit = median(vs_fit);
  out.json["sustained_vs_entry"] = out.vs_entry;
  out.json["sustained_vs_fit"] = out.vs_fit;
  out.json["entry_sustained"] = hw.efficiency.sustained;
  return out;
}

// --write-hardware: the entry's own file with the fit's scale on its GEMM ceiling. A trace's rates
// were taken inside its run, at whatever clock its GPU held there, so they stand for the sustained
// rate too (`sustained` 1); a table's were measured in short bursts (gpu-check.sh, OpenXLA), so the
// entry's sustained share stays unless --held-rates measured one (`held`). Everything else, and
// the sources of everything else, is the entry's. The result is parsed as a hardware file before
// it is written, whole or not at all.
// Returns the GEMM ceiling written.
double write_calibrated_hardware(const GemmRatesArgs& a, const std::string& hardware,
                                 const cost::Hardware& hw, const cost::GemmTableFit& fit,
                                 size_t shapes, bool from_trace,
                                 const std::optional<HeldShares>& held) {
  const std::string entry =
      hardware.ends_with(".json")
          ? hardware
          : cost::find_json_in(hardware, cost::catalog_dirs(), "hardware", "a catalog name");
  nlohmann::json j = predict::load_json_file(entry);
  // `hw` is the entry's FP8 view under --fp8 (cost::fp8_gemm_view): its gemm_max is gemm_fp8_max.
  const char* key = a.fp8 ? "gemm_fp8_max" : "gemm_max";
  const double gemm_max = std::min(1.0, hw.efficiency.gemm_max * fit.scale);
  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  char line[1024];
  std::snprintf(line, sizeof line,
                "efficiency.%s %.4g: calibrated %s by meshscope calibrate --gemm-rates %s "
                "--hardware %s%s: the entry's %.4g (%s) times %.4f, the scale that fits those %zu "
                "measured %sGEMM shapes to the entry's %sGEMM model within %.2f%% rms",
                key, gemm_max, date, a.file.c_str(), hardware.c_str(), a.fp8 ? " --fp8" : "",
                hw.efficiency.gemm_max, entry.c_str(), fit.scale, shapes, a.fp8 ? "FP8 " : "",
                a.fp8 ? "FP8 " : "", 100 * fit.rms);
  std::vector<std::string> sources = {line};
  if (from_trace) {
    sources.push_back(
        "efficiency.sustained 1: calibrated, the GEMM rates were taken inside a profiled run (" +
        a.file + "), at the clocks its GPU held there, so they are the rates it sustained");
  }
  if (held) {
    std::snprintf(line, sizeof line,
                  "efficiency.sustained %.4g: calibrated %s by meshscope calibrate --held-rates "
                  "%s: the median of those held GEMM rates over this file's burst rate for their "
                  "shapes (the entry's GEMM model with the scale above; over the entry's own, "
                  "%.4g)",
                  held->vs_fit, date, a.held.c_str(), held->vs_entry);
    sources.push_back(line);
  }
  const bool sustained_replaced = from_trace || held.has_value();
  for (const nlohmann::json& s : j.at("sources")) {
    const std::string text = s.is_string() ? s.get<std::string>() : std::string();
    if ((!a.fp8 && text.starts_with("efficiency.gemm_max")) ||
        (sustained_replaced && text.starts_with("efficiency.sustained ")))
      continue;
    sources.push_back(text);
  }
  j["sources"] = sources;
  j["name"] = hw.name + "-calibrated";
  j["efficiency"][key] = gemm_max;
  if (from_trace) j["efficiency"]["sustained"] = 1.0;
  if (held) j["efficiency"]["sustained"] = held->vs_fit;
  cost::parse_hardware(j, a.write_hardware);  // what predict will read back
  traces::write_file_atomic(a.write_hardware, json_text(j) + "\n");
  return gemm_max;
}

}  // namespace

void run_gemm_rates(const GemmRatesArgs& a, const std::string& hardware) {
  cost::Hardware hw = cost::find_hardware(hardware);
  if (a.fp8) {
    try {
      hw = cost::fp8_gemm_view(hw);
    } catch (const std::invalid_argument& e) {
      throw UserError(std::string("--fp8: ") + e.what());
    }
  }
  std::vector<TraceShape> shapes;
  const std::vector<cost::MeasuredGemm> rows = read_rates(a.file, &shapes);
  if (a.fp8 && !shapes.empty())
    throw UserError(a.file +
                    ": --fp8 reads a table of FP8 rates; a trace's GEMMs are read as the "
                    "run's bf16 ones");
  if (!a.held.empty() && a.fp8)
    throw usage_error(
        "--held-rates: the sustained share is measured on bf16 GEMMs (the entry's "
        "FP8 GEMMs run at the same share); give --held-rates without --fp8");
  if (!a.held.empty() && !shapes.empty())
    throw UserError(a.file +
                    ": a trace's GEMM rates were taken inside a run, at the clock it held, so they "
                    "are sustained rates already: --held-rates goes with a table of burst rates");
  const cost::GemmTableFit fit = cost::fit_gemm_table(hw, rows);
  // The scan fits the table once per k_half: about 0.5 ms a shape each on this project's 2-core
  // machine, so 200,000 shapes took a silent minute and a half. Said every 10 s, as a long read is.
  const auto started = std::chrono::steady_clock::now();
  auto said = started;
  const cost::KHalfScan scan = cost::scan_k_half(hw, rows, 16, 512, [&](size_t done, size_t of) {
    const auto now = std::chrono::steady_clock::now();
    if (done == of || now - said < std::chrono::seconds(10)) return;
    said = now;
    std::fprintf(stderr,
                 "calibrate: %s: k_half scan, %zu of %zu values fitted (%zu shapes), %.0f s\n",
                 a.file.c_str(), done, of, rows.size(),
                 std::chrono::duration<double>(now - started).count());
  });
  const cost::MeasuredGemm& best =
      *std::max_element(rows.begin(), rows.end(),
                        [](const auto& x, const auto& y) { return x.flops_per_s < y.flops_per_s; });
  const double peak = hw.peak(cost::Precision::kBf16);  // the FP8 peak under --fp8
  // A scale at the end of its range matched nothing: the rates are of other hardware, or the shapes
  // so small that the fixed time per kernel took the place of the rate.
  const bool scale_at_bound = fit.scale < 0.21 || fit.scale > 4.9;
  std::optional<nlohmann::json> compared;
  if (!a.compare.empty()) compared = compare_rates(hw, fit, a.compare);
  const bool from_trace = !shapes.empty();
  std::optional<nlohmann::json> by_time;
  if (from_trace) by_time = trace_shapes(hw, fit, std::move(shapes));
  std::optional<HeldShares> held;
  if (!a.held.empty()) held = held_shares(hw, fit, a.held);
  // The fit has two parameters (the scale and the time a kernel adds): fewer than three shapes
  // fit them exactly whatever they are (one row had written a hardware file, "within 0.00% rms").
  std::set<std::array<int64_t, 4>> distinct;
  for (const cost::MeasuredGemm& r : rows) distinct.insert({r.b, r.m, r.n, r.k});
  const bool too_few = distinct.size() < 3;
  std::optional<double> written;  // the GEMM ceiling written to a.write_hardware
  if (!a.write_hardware.empty()) {
    if (too_few)
      throw UserError(a.file + ": " + std::to_string(distinct.size()) + " shape" +
                      (distinct.size() == 1 ? "" : "s") +
                      " cannot determine the fit's two parameters (its rate scale and the time a "
                      "kernel adds): no hardware file written; measure 3 shapes or more");
    if (scale_at_bound)
      throw UserError(a.file + ": its rates fit " + hw.name +
                      "'s GEMM model at no scale from 0.2 to 5 (they are not of its kind, or "
                      "its shapes are too small to tell the rate from the time each kernel "
                      "adds): no hardware file written");
    if (held && held->vs_fit > 1) {
      char share[64];
      std::snprintf(share, sizeof share, "%.3f", held->vs_fit);
      throw UserError(a.held + ": held rates above the burst rate with the fit (a share of " +
                      share +
                      "): a GEMM held at the power limit runs at most at its burst rate; are "
                      "they of another GPU, or FP8? No hardware file written");
    }
    // A ceiling above 1 is a GEMM faster than the entry's peak. Up to 1.1 (assumption: about
    // the H100 SXM's highest boost clock, 1.98 GHz, over the 1.83 GHz its tensor peak is quoted
    // at, glennklockwood.com's H100 page) it is written as 1 with a word; beyond it the rates are
    // not of this entry (192% of an A100's peak had been written as 1, printed as 0.865 x 2.268).
    const double ceiling = hw.efficiency.gemm_max * fit.scale;
    if (ceiling > 1.1) {
      char share[64];
      std::snprintf(share, sizeof share, "%.3g", ceiling);
      throw UserError(a.file + ": its rates fit a GEMM ceiling of " + share + " times " + hw.name +
                      "'s peak: no clock runs a GEMM that far above it; are they of another "
                      "GPU, or FP8? No hardware file written");
    }
    if (ceiling > 1)
      std::fprintf(a.json ? stderr : stdout,  // --json's stdout is the JSON alone
                   "the fitted ceiling, %.3f of the peak, is written as 1: above the peak's "
                   "clock, within the GPU's boost\n",
                   ceiling);
    written = write_calibrated_hardware(a, hardware, hw, fit, rows.size(), from_trace, held);
  }
  if (a.json) {
    nlohmann::json j = {{"file", a.file},
                        {"hardware", hw.name},
                        {"fp8", a.fp8},
                        {"shapes", rows.size()},
                        {"rms", fit.rms},
                        {"scale", fit.scale},
                        {"scale_at_bound", scale_at_bound},
                        {"fixed_s", fit.fixed_s},
                        {"k_half", hw.efficiency.k_half},  // fp8_k_half under --fp8
                        {"best_k_half", scan.best_k_half},
                        {"best_k_half_rms", scan.best_rms},
                        {"best_flops_per_s", best.flops_per_s},
                        {"best_shape", {best.b, best.m, best.n, best.k}}};
    if (compared) j["compare"] = *compared;
    if (by_time) j["trace_shapes"] = *by_time;
    if (held) j["held"] = held->json;
    if (written) j["written_hardware"] = a.write_hardware;
    std::printf("%s\n", json_text(j).c_str());
    return;
  }
  std::printf(
      "%sGEMM rates: %zu shapes from %s against %s's %sGEMM model (burst: no sustained share)\n",
      a.fp8 ? "FP8 " : "", rows.size(), a.file.c_str(), hw.name.c_str(), a.fp8 ? "FP8 " : "");
  std::printf(
      "  shape model within %.2f%% rms, its rate scaled by %.3f and %.2f us a kernel added\n",
      100 * fit.rms, fit.scale, fit.fixed_s * 1e6);
  if (too_few)
    std::printf(
        "  %zu shape%s: the fit's two parameters are not determined (any two shapes are fitted "
        "exactly); measure 3 shapes or more\n",
        distinct.size(), distinct.size() == 1 ? "" : "s");
  if (scale_at_bound)
    std::printf(
        "  the rate scale reached the end of its range (0.2 to 5): these rates are not of "
        "%s's kind, or the shapes are too small to tell the rate from the %.2f us a kernel "
        "adds\n",
        hw.name.c_str(), fit.fixed_s * 1e6);
  std::printf("  %s: the entry's %.0f gives that; the best of 0, 16, ..., 512 is %.0f (%.2f%%)\n",
              a.fp8 ? "fp8_k_half" : "k_half", hw.efficiency.k_half, scan.best_k_half,
              100 * scan.best_rms);
  std::printf(
      "  fastest: %.1f TFLOP/s (%.1f%% of the entry's %s peak) at b %lld, m %lld, n %lld, "
      "k %lld\n",
      best.flops_per_s / 1e12, peak > 0 ? 100 * best.flops_per_s / peak : 0.0,
      a.fp8 ? "FP8" : "bf16", static_cast<long long>(best.b), static_cast<long long>(best.m),
      static_cast<long long>(best.n), static_cast<long long>(best.k));
  if (held) {
    std::printf(
        "held at the power limit: %zu shape%s from %s, sustained share %.3f of the entry's "
        "burst rate (the entry's own share: %.3f), %.3f of the burst with the fit\n",
        held->json["rows"].size(), held->json["rows"].size() == 1 ? "" : "s", a.held.c_str(),
        held->vs_entry, hw.efficiency.sustained, held->vs_fit);
    for (const nlohmann::json& r : held->json["rows"])
      std::printf(
          "  b %lld, m %lld, n %lld, k %lld: held %.1f TFLOP/s; burst %.1f (entry), %.1f "
          "(fit)\n",
          r["shape"][0].get<long long>(), r["shape"][1].get<long long>(),
          r["shape"][2].get<long long>(), r["shape"][3].get<long long>(),
          r["held_flops_per_s"].get<double>() / 1e12,
          r["entry_burst_flops_per_s"].get<double>() / 1e12,
          r["fitted_burst_flops_per_s"].get<double>() / 1e12);
  }
  if (written) {
    char sustained[96] = "";
    if (from_trace)
      std::snprintf(sustained, sizeof sustained,
                    "; sustained 1: the rates were taken inside a run");
    else if (held)
      std::snprintf(sustained, sizeof sustained, "; sustained %.4g: the held rates", held->vs_fit);
    std::printf("written: %s (%s %.4g, %sthe entry's %.4g x %.3f%s)\n", a.write_hardware.c_str(),
                a.fp8 ? "gemm_fp8_max" : "gemm_max", *written,
                hw.efficiency.gemm_max * fit.scale > 1 ? "at most 1 of " : "",
                hw.efficiency.gemm_max, fit.scale, sustained);
    // The ceiling alone is written: the time a kernel adds is the entry's launch_overhead_ns,
    // which every op shares, not the GEMMs' own (a fit of 8 us beside an entry's 2 predicted a
    // table's small GEMMs at 0.3 to 0.6 of their time).
    std::printf(
        "  not written: the fitted %.2f us a GEMM kernel adds; predict keeps the entry's "
        "launch_overhead_ns (%.2f us, every op's), so the table's smallest shapes predict "
        "%s than measured\n",
        fit.fixed_s * 1e6, hw.launch_overhead_ns / 1e3,
        fit.fixed_s * 1e9 > hw.launch_overhead_ns ? "faster" : "slower");
  }
  if (by_time) {
    constexpr size_t kShown = 15;
    std::printf(
        "GEMM time by shape, the most first (%zu shapes%s), beside the model with that "
        "fit:\n",
        by_time->size(), by_time->size() > kShown ? ", the first 15 shown; --json has all" : "");
    for (size_t i = 0; i < std::min(kShown, by_time->size()); ++i) {
      const nlohmann::json& r = (*by_time)[i];
      std::printf(
          "  %5.1f%%  %lld ops, %.3f ms  b %lld, m %lld, n %lld, k %lld: measured %.1f, model "
          "%.1f TFLOP/s (x%.3f)\n",
          100 * r["share"].get<double>(), r["ops"].get<long long>(),
          r["kernel_s"].get<double>() * 1e3, r["shape"][0].get<long long>(),
          r["shape"][1].get<long long>(), r["shape"][2].get<long long>(),
          r["shape"][3].get<long long>(), r["measured_flops_per_s"].get<double>() / 1e12,
          r["model_flops_per_s"].get<double>() / 1e12, r["model_over_measured"].get<double>());
    }
  }
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

}  // namespace meshscope::cli
