// meshscope-kernel-check's command line (parse_kernel_check_options): the invocations of
// scripts/gpu-check.sh, each numeric option's accepted values, and each refusal with its exact
// line. Needs no device.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "kernels/cuda/check_options.h"

namespace meshscope::kernels::cuda {
namespace {

KernelCheckCommandLine parse(std::vector<std::string> args) {
  args.insert(args.begin(), "meshscope-kernel-check");
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  return parse_kernel_check_options(static_cast<int>(argv.size()), argv.data());
}

// The options of a command line the tool runs with (a test failure names the refusal).
KernelCheckOptions accepted(std::vector<std::string> args) {
  KernelCheckCommandLine line = parse(std::move(args));
  EXPECT_EQ(line.error, "");
  EXPECT_EQ(line.help, "");
  return line.options.value_or(KernelCheckOptions{});
}

void expect_refused(std::vector<std::string> args, const std::string& error) {
  SCOPED_TRACE(error);
  const KernelCheckCommandLine line = parse(std::move(args));
  EXPECT_FALSE(line.options.has_value());
  EXPECT_EQ(line.help, "");
  EXPECT_EQ(line.error, error);
}

// Each way scripts/gpu-check.sh runs the tool (each must be accepted: a refusal there would fail
// its row).
TEST(KernelCheckOptions, TakesEveryInvocationOfGpuCheck) {
  const KernelCheckOptions checks = accepted({});
  EXPECT_EQ(checks.check.seed, 0u);
  EXPECT_FALSE(checks.versions);
  EXPECT_EQ(checks.gemm_shapes, "");
  EXPECT_EQ(checks.sustained_s, 0);
  EXPECT_EQ(checks.sm_margin_cases, "");

  EXPECT_TRUE(accepted({"--versions"}).versions);

  const KernelCheckOptions held = accepted({"--gemm-rates", "xla.csv", "--sustained", "20"});
  EXPECT_EQ(held.gemm_shapes, "xla.csv");
  EXPECT_EQ(held.sustained_s, 20);
  EXPECT_FALSE(held.fp8);

  EXPECT_EQ(accepted({"--gemm-rates", "dev.csv"}).gemm_shapes, "dev.csv");
  EXPECT_TRUE(accepted({"--gemm-rates", "wgrad.csv", "--accumulate-fp32"}).accumulate_fp32);

  const KernelCheckOptions fp8 = accepted({"--gemm-rates", "tilelang.csv", "--fp8"});
  EXPECT_TRUE(fp8.fp8);
  EXPECT_FALSE(fp8.split_accumulation);
  const KernelCheckOptions split =
      accepted({"--gemm-rates", "tilelang.csv", "--fp8", "--split-accumulation"});
  EXPECT_TRUE(split.fp8);
  EXPECT_TRUE(split.split_accumulation);

  EXPECT_EQ(accepted({"--sm-margin", "cases.csv"}).sm_margin_cases, "cases.csv");
}

TEST(KernelCheckOptions, TakesASeedInDecimalDigits) {
  EXPECT_EQ(accepted({"--seed", "12345"}).check.seed, 12345u);
  EXPECT_EQ(accepted({"--seed=0"}).check.seed, 0u);
  EXPECT_EQ(accepted({"--seed", "18446744073709551615"}).check.seed, UINT64_MAX);
  // Decimal, not C's octal (CLI11 2.1 reads an unsigned option in base 0: 8).
  EXPECT_EQ(accepted({"--seed", "010"}).check.seed, 10u);
  EXPECT_EQ(accepted({"--seed", "7", "--sm-margin", "cases.csv"}).check.seed, 7u);
}

TEST(KernelCheckOptions, RefusesASeedThatIsNoWholeNumber) {
  const std::string range = " is not a whole number from 0 to 18446744073709551615";
  // Each had been taken by strtoull: "abc", "" and "1.5" as 0 or 1, "-1" as 2^64 - 1, the
  // overflow as 2^64 - 1.
  expect_refused({"--seed", "abc"}, "--seed: 'abc'" + range);
  expect_refused({"--seed", "-1"}, "--seed: '-1'" + range);
  expect_refused({"--seed", "1.5"}, "--seed: '1.5'" + range);
  expect_refused({"--seed", "+5"}, "--seed: '+5'" + range);
  expect_refused({"--seed", " 5"}, "--seed: ' 5'" + range);
  expect_refused({"--seed", "0x10"}, "--seed: '0x10'" + range);
  expect_refused({"--seed", "18446744073709551616"}, "--seed: '18446744073709551616'" + range);
  expect_refused({"--seed", ""}, "--seed: an empty value is no number");
}

TEST(KernelCheckOptions, TakesSustainedSecondsAboveZeroUpTo600) {
  EXPECT_EQ(accepted({"--sustained", "600"}).sustained_s, 600);
  EXPECT_EQ(accepted({"--sustained", "0.5"}).sustained_s, 0.5);
  expect_refused({"--sustained", "0"}, "--sustained: wants 0 < seconds <= 600, got 0");
  expect_refused({"--sustained", "-1"}, "--sustained: wants 0 < seconds <= 600, got -1");
  expect_refused({"--sustained", "601"}, "--sustained: wants 0 < seconds <= 600, got 601");
  expect_refused({"--sustained", "nan"}, "--sustained: wants 0 < seconds <= 600, got nan");
  expect_refused({"--sustained", "abc"}, "--sustained: 'abc' is no number");
  expect_refused({"--sustained", "20s"}, "--sustained: '20s' is no number");
  expect_refused({"--sustained", ""}, "--sustained: an empty value is no number");
}

TEST(KernelCheckOptions, RefusesOptionsWithoutWhatTheyModify) {
  expect_refused({"--fp8"}, "--fp8 measures the shapes of --gemm-rates");
  expect_refused({"--gemm-rates", "x.csv", "--split-accumulation"},
                 "--split-accumulation is an FP8 GEMM's (--fp8)");
  expect_refused({"--accumulate-fp32"},
                 "--accumulate-fp32 is a bf16 GEMM's of --gemm-rates, not --fp8's");
  expect_refused({"--gemm-rates", "x.csv", "--fp8", "--accumulate-fp32"},
                 "--accumulate-fp32 is a bf16 GEMM's of --gemm-rates, not --fp8's");
  expect_refused({"--versions", "--seed", "5"}, "--seed excludes --versions");
  expect_refused({"--gemm-rates", "x.csv", "--versions"}, "--versions excludes --gemm-rates");
}

TEST(KernelCheckOptions, RefusesEmptyPathsAndUnknownArguments) {
  // An empty path had been taken for the option not given: the kernel checks ran instead.
  expect_refused({"--gemm-rates", ""}, "--gemm-rates: an empty path");
  expect_refused({"--sm-margin", ""}, "--sm-margin: an empty path");
  expect_refused({"--bogus"}, "The following argument was not expected: --bogus");
  expect_refused({"shapes.csv"}, "The following argument was not expected: shapes.csv");
}

TEST(KernelCheckOptions, HelpNamesEveryOption) {
  const KernelCheckCommandLine line = parse({"--help"});
  EXPECT_FALSE(line.options.has_value());
  EXPECT_EQ(line.error, "");
  EXPECT_EQ(line.help.rfind("meshscope-kernel-check: ", 0), 0u) << line.help;
  for (const char* option :
       {"--seed", "--versions", "--gemm-rates", "--fp8", "--split-accumulation",
        "--accumulate-fp32", "--sustained", "--sm-margin"})
    EXPECT_NE(line.help.find(option), std::string::npos) << option;
}

}  // namespace
}  // namespace meshscope::kernels::cuda
