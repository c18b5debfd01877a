// parse_kernel_check_options: see check_options.h.
#include "kernels/cuda/check_options.h"

#include <CLI/CLI.hpp>

#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>

namespace meshscope::kernels::cuda {
namespace {

// A seed in decimal digits within uint64_t, nothing else. The hand-rolled loop this replaced read
// it with an unchecked strtoull ("abc" and "" were seed 0, "-1" was 2^64 - 1), and CLI11 2.1's own
// reading of an unsigned option is strtoull in base 0 ("-1" still 2^64 - 1, "010" 8): the option
// is read as text and converted here, as the check below takes it.
std::optional<uint64_t> parse_seed(const std::string& text) {
  uint64_t seed = 0;
  const char* end = text.data() + text.size();
  // from_chars takes no sign for an unsigned type, no spaces, and says when the value overflows.
  const std::from_chars_result read = std::from_chars(text.data(), end, seed, 10);
  if (text.empty() || read.ec != std::errc() || read.ptr != end) return std::nullopt;
  return seed;
}

CLI::Validator seed_check() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (text.empty()) return "an empty value is no number";
        return parse_seed(text)
                   ? ""
                   : "'" + text + "' is not a whole number from 0 to " + std::to_string(UINT64_MAX);
      },
      "");
}

// strtod's reading of the whole text, then the range: the loop had taken "abc" for 0 seconds.
CLI::Validator sustained_seconds() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (text.empty()) return "an empty value is no number";
        char* end = nullptr;
        const double s = std::strtod(text.c_str(), &end);
        if (*end != '\0') return "'" + text + "' is no number";
        return s > 0 && s <= 600 ? "" : "wants 0 < seconds <= 600, got " + text;
      },
      "");
}

// An empty path had been taken for the option not given (the kernel checks ran instead).
CLI::Validator non_empty_path() {
  return CLI::Validator(
      [](std::string& path) -> std::string { return path.empty() ? "an empty path" : ""; }, "");
}

}  // namespace

KernelCheckCommandLine parse_kernel_check_options(int argc, const char* const* argv) {
  CLI::App cli{
      "meshscope-kernel-check: the CUDA ops against the CPU reference, GEMM rates and the CUDA "
      "libraries' versions, for scripts/gpu-check.sh. Exit 0: all passed; 1: a check or the "
      "device failed; 2: no device (skipped) or a bad argument",
      "meshscope-kernel-check"};
  KernelCheckOptions options;
  std::string seed;
  CLI::Option* seed_option =
      cli.add_option("--seed", seed, "seed of the checks' random inputs (default 0: a fresh one)")
          ->check(seed_check())
          ->type_name("N");
  CLI::Option* versions = cli.add_flag(
      "--versions", options.versions,
      "print one line per CUDA library (version<TAB>cublas<TAB>13.0.0<TAB>cublasGetProperty) "
      "and exit; 1 when one could not be read");
  CLI::Option* gemm_rates =
      cli.add_option("--gemm-rates", options.gemm_shapes,
                     "the bf16 GEMM rate of each shape of this CSV (b,m,n,k), as CSV on stdout")
          ->check(non_empty_path())
          ->type_name("SHAPES.csv");
  CLI::Option* fp8 = cli.add_flag(
      "--fp8", options.fp8, "--gemm-rates: the e4m3 x e4m3 -> bf16 rates through cuBLASLt (b 1)");
  CLI::Option* split = cli.add_flag("--split-accumulation", options.split_accumulation,
                                    "--fp8: accumulate as Transformer Engine's dgrad and wgrad");
  CLI::Option* accumulate = cli.add_flag("--accumulate-fp32", options.accumulate_fp32,
                                         "--gemm-rates: each bf16 GEMM added into an fp32 C");
  CLI::Option* sustained =
      cli.add_option("--sustained", options.sustained_s,
                     "8192^3's burst rate, then its rate held this long (0 < SECONDS <= 600)")
          ->check(sustained_seconds())
          ->type_name("SECONDS");
  CLI::Option* sm_margin =
      cli.add_option("--sm-margin", options.sm_margin_cases,
                     "each case's GEMM timed the six ways of sm_margin.h, as CSV on stdout")
          ->check(non_empty_path())
          ->type_name("CASES.csv");
  // --versions reads the libraries and nothing else: an option beside it was silently ignored.
  for (CLI::Option* other : {seed_option, gemm_rates, fp8, split, accumulate, sustained, sm_margin})
    versions->excludes(other);

  KernelCheckCommandLine result;
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {  // --help
      std::ostringstream help;
      cli.exit(e, help);
      result.help = help.str();
    } else {
      result.error = e.what();
    }
    return result;
  }
  // The loop's own words, in its order.
  if (options.fp8 && options.gemm_shapes.empty())
    result.error = "--fp8 measures the shapes of --gemm-rates";
  else if (options.split_accumulation && !options.fp8)
    result.error = "--split-accumulation is an FP8 GEMM's (--fp8)";
  else if (options.accumulate_fp32 && (options.fp8 || options.gemm_shapes.empty()))
    result.error = "--accumulate-fp32 is a bf16 GEMM's of --gemm-rates, not --fp8's";
  if (!result.error.empty()) return result;
  if (!seed.empty()) options.check.seed = *parse_seed(seed);
  result.options = options;
  return result;
}

}  // namespace meshscope::kernels::cuda
