// libFuzzer target: any bytes through the Chrome/Kineto JSON importer (gzip is detected by its
// magic, so compressed inputs reach the inflater too), then through `meshscope calibrate`'s fit
// (cost::fit_calibration on the cpu-local entry): it may refuse the trace (std::invalid_argument:
// nothing to fit), but every figure it fits must be finite, or the calibration file it writes
// would not read back (JSON has no NaN); and through `calibrate --gemm-rates`'s reader of GEMM ops
// (trace_gemms.h), whose every GEMM must have sizes of 1 or more and a finite, non-negative
// kernel time. Only ImportError may come out of the import; anything
// else — a crash, a sanitizer report, another exception, a broken promise (a trap) — is a bug.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "fuzz/fuzz_check.h"
#include "sim/cost/calibration.h"
#include "sim/cost/fit.h"
#include "sim/cost/hardware.h"
#include "traces/import/load_trace.h"
#include "traces/import/trace_gemms.h"

namespace {

bool finite_fit(const meshscope::cost::Calibration& c) {
  const auto link = [](const meshscope::cost::LinkFit& f) {
    return std::isfinite(f.alpha_ns) && std::isfinite(f.bandwidth_bytes_per_s) &&
           std::isfinite(f.rms_error);
  };
  for (const meshscope::cost::PhaseFit& f : c.phases) {
    if (!std::isfinite(f.flops_per_s) || !std::isfinite(f.overhead_ns) ||
        !std::isfinite(f.efficiency) || !std::isfinite(f.rms_error) ||
        !std::isfinite(f.model_scale))
      return false;
  }
  return link(c.p2p) && link(c.collective) && link(c.all_to_all);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace meshscope::traces;
  ImportOptions options;
  options.format = "chrome-json";
  options.max_event_bytes = int64_t{1} << 20;  // keep each run small
  options.max_inflated_bytes = int64_t{64} << 20;
  try {
    const Timeline t = load_trace_bytes(std::string_view(reinterpret_cast<const char*>(data), size),
                                        "fuzz.json", options);
    meshscope::fuzz::check_timeline(t);
    static const meshscope::cost::Hardware cpu = meshscope::cost::find_hardware("cpu-local");
    try {
      const meshscope::cost::Calibration c =
          meshscope::cost::fit_calibration({&t}, cpu, meshscope::cost::Precision::kFp32);
      meshscope::fuzz::require(finite_fit(c));
    } catch (const std::invalid_argument&) {
    }
  } catch (const ImportError&) {
  }
  try {
    const TraceGemms g = read_trace_gemms_bytes(
        std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.json", options);
    for (const TraceGemm& x : g.gemms) {
      meshscope::fuzz::require(x.b >= 1 && x.m >= 1 && x.n >= 1 && x.k >= 1 && x.kernels >= 1);
      meshscope::fuzz::require(std::isfinite(x.kernel_s) && x.kernel_s >= 0);
    }
  } catch (const ImportError&) {
  }
  return 0;
}
