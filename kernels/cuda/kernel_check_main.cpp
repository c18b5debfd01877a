// meshscope-kernel-check: runs the CUDA-vs-CPU op checks without GoogleTest (for gpu-check.sh).
// Exit 0: all passed; 1: a check failed or the device failed, or a bad argument (check_options.h:
// one line on stderr naming the option); 2: no device (skipped). A bad argument is not 2, which
// gpu-check.sh reads as a SKIP row: a mistyped invocation there fails its row.
// --versions: one line per library ("version<TAB>cublas<TAB>13.0.0<TAB>cublasGetProperty"), exit 0
// when every version could be read, 1 otherwise; needs no device.
// --gemm-rates SHAPES.csv: the bf16 GEMM rate of each shape (gemm_rates.h) as CSV on stdout, for
// `meshscope calibrate --gemm-rates`; with --fp8, the e4m3 x e4m3 -> bf16 rate through cuBLASLt
// instead (measure_fp8_gemm_rates: b 1 only), accumulated fast as Transformer Engine's forward
// GEMM, or with --split-accumulation as its dgrad and wgrad GEMMs; with --accumulate-fp32, each
// bf16 GEMM added into an fp32 C (the weight gradient of Megatron's gradient_accumulation_fusion);
// --sustained SECONDS: 8192 x 8192 x 8192's burst rate after idle gaps and then kept busy that
// long (hold_gemm): "sustained shape<TAB>b,m,n,k<TAB>window seconds", "burst<TAB>FLOP/s",
// "hold<TAB>begin<TAB>end" (Unix seconds) and the rate of each half-second window
// ("sustained<TAB>WINDOW<TAB>FLOP/s"), which scripts/gpu_check_parse.py reads;
// --sm-margin CASES.csv: each case's GEMM timed the six ways of sm_margin.h, as CSV on stdout
// (scripts/sm_margin_cases.csv: the NeMo rows' pipelined reduce-scatter GEMMs).
// Exit 2 without a device, as the checks.
#include <cstddef>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cuda/check_harness.h"
#include "kernels/cuda/check_options.h"
#include "kernels/cuda/device.h"
#include "kernels/cuda/gemm_rates.h"
#include "kernels/cuda/library_versions.h"
#include "kernels/cuda/sm_margin.h"

int main(int argc, char** argv) {
  using namespace meshscope::kernels::cuda;
  const KernelCheckCommandLine command_line = parse_kernel_check_options(argc, argv);
  if (!command_line.options) {
    if (command_line.error.empty()) {  // --help
      std::fputs(command_line.help.c_str(), stdout);
      return 0;
    }
    std::fprintf(stderr, "meshscope-kernel-check: %s\n", command_line.error.c_str());
    return 1;
  }
  const KernelCheckOptions& options = *command_line.options;
  if (options.versions) {
    bool all = true;
    for (const LibraryVersion& v : library_versions()) {
      std::printf("version\t%s\t%s\t%s\n", v.library.c_str(),
                  v.version.empty() ? "?" : v.version.c_str(), v.detail.c_str());
      all = all && !v.version.empty();
    }
    return all ? 0 : 1;
  }
  std::vector<GemmShape> shapes;
  std::vector<SmMarginCase> cases;
  if (!options.gemm_shapes.empty() || !options.sm_margin_cases.empty()) {
    try {  // a bad file is named before any device is probed
      if (!options.gemm_shapes.empty()) shapes = read_gemm_shapes(options.gemm_shapes);
      for (const GemmShape& g : shapes)
        if (options.fp8 && g.b != 1)
          throw std::runtime_error(options.gemm_shapes + ": a shape with b " + std::to_string(g.b) +
                                   ": FP8 rates are measured for b 1 only");
      if (!options.sm_margin_cases.empty()) cases = read_sm_margin_cases(options.sm_margin_cases);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "meshscope-kernel-check: %s\n", e.what());
      return 1;
    }
  }
  const DeviceProbe probe = probe_devices();
  if (!probe.available()) {
    std::printf("SKIP: %s\n", no_device_message(probe).c_str());
    return 2;
  }
  if (!shapes.empty() || options.sustained_s > 0 || !cases.empty()) {
    try {
      if (!cases.empty())
        std::fputs(format_sm_margin(measure_sm_margin(cases, 20, options.check.seed)).c_str(),
                   stdout);
      if (!shapes.empty()) {
        const Fp8Accumulation fp8_accumulation =
            options.split_accumulation ? Fp8Accumulation::kSplit : Fp8Accumulation::kFast;
        const GemmOutput output =
            options.accumulate_fp32 ? GemmOutput::kFp32Accumulate : GemmOutput::kBf16;
        const std::vector<GemmRate> rates = options.fp8
                                                ? measure_fp8_gemm_rates(shapes, fp8_accumulation)
                                                : measure_gemm_rates(shapes, 5, 20, 1, output);
        std::fputs(format_gemm_rates(rates).c_str(), stdout);
      }
      if (options.sustained_s > 0) {
        const GemmShape shape{1, 8192, 8192, 8192};
        constexpr double kWindowS = 0.5;
        const HeldGemm held = hold_gemm(shape, options.sustained_s, kWindowS);
        std::printf("sustained shape\t%lld,%lld,%lld,%lld\t%g\n", static_cast<long long>(shape.b),
                    static_cast<long long>(shape.m), static_cast<long long>(shape.n),
                    static_cast<long long>(shape.k), kWindowS);
        std::printf("burst\t%.6e\n", held.burst_flops_per_s);
        std::printf("hold\t%.3f\t%.3f\n", held.hold_begin_unix_s, held.hold_end_unix_s);
        for (size_t w = 0; w < held.window_flops_per_s.size(); ++w)
          std::printf("sustained\t%zu\t%.6e\n", w, held.window_flops_per_s[w]);
      }
      return 0;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "meshscope-kernel-check: %s\n", e.what());
      return 1;
    }
  }
  try {
    uint64_t seed = 0;
    const auto results = run_kernel_checks(options.check, &seed);
    std::fputs(format_check_results(results, seed).c_str(), stdout);
    for (const auto& r : results) {
      if (!r.passed) return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "meshscope-kernel-check: %s\n", e.what());
    return 1;
  }
}
