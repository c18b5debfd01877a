// The check harness's driver: the Checker helpers, the error norm and the report.
#include "kernels/cuda/check_harness.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include "kernels/cuda/check_internal.h"

namespace meshscope::kernels::cuda {

double relative_error(std::span<const float> out, std::span<const float> ref) {
  if (out.size() != ref.size()) return std::numeric_limits<double>::infinity();
  double diff2 = 0, ref2 = 0, out2 = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (!std::isfinite(out[i])) return std::numeric_limits<double>::infinity();
    const double d = static_cast<double>(out[i]) - ref[i];
    diff2 += d * d;
    ref2 += static_cast<double>(ref[i]) * ref[i];
    out2 += static_cast<double>(out[i]) * out[i];
  }
  return ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(out2);
}

namespace detail {

Checker::Checker(uint64_t seed, std::vector<CheckResult>& results)
    : stream_(make_stream()), ctx_(stream_.get()), rng_(seed), results_(results) {}

std::vector<float> Checker::random(size_t n, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng_);
  return v;
}

std::vector<int32_t> Checker::random_labels(size_t n, int classes) {
  std::uniform_int_distribution<int32_t> dist(0, classes - 1);
  std::vector<int32_t> v(n);
  for (auto& x : v) x = dist(rng_);
  return v;
}

DeviceBuffer<float> Checker::poisoned(size_t n) {
  DeviceBuffer<float> dev(n);
  MESHSCOPE_CUDA_CHECK(cudaMemsetAsync(dev.data(), 0xFF, dev.bytes(), ctx_.stream()));
  return dev;
}

std::vector<float> Checker::download(const DeviceBuffer<float>& dev) {
  std::vector<float> host(dev.size());
  MESHSCOPE_CUDA_CHECK(
      cudaMemcpyAsync(host.data(), dev.data(), dev.bytes(), cudaMemcpyDeviceToHost, ctx_.stream()));
  sync();
  return host;
}

void Checker::sync() { MESHSCOPE_CUDA_CHECK(cudaStreamSynchronize(ctx_.stream())); }

void Checker::expect_close(std::string op, std::string variant, const std::vector<float>& out,
                           const std::vector<float>& ref, double tolerance) {
  const double err = relative_error(out, ref);
  results_.push_back({std::move(op), std::move(variant), err, tolerance, err < tolerance, ""});
}

void Checker::expect_close(std::string op, std::string variant, double out, double ref,
                           double tolerance) {
  double err = std::abs(out - ref) / (ref != 0 ? std::abs(ref) : 1.0);
  if (!std::isfinite(out)) err = std::numeric_limits<double>::infinity();
  results_.push_back({std::move(op), std::move(variant), err, tolerance, err < tolerance, ""});
}

void Checker::expect_true(std::string op, std::string variant, bool ok, std::string note) {
  results_.push_back(
      {std::move(op), std::move(variant), ok ? 0.0 : 1.0, 0.5, ok, ok ? "" : std::move(note)});
}

}  // namespace detail

std::vector<CheckResult> run_kernel_checks(const CheckOptions& options, uint64_t* seed_used) {
  const uint64_t seed = options.seed != 0 ? options.seed : std::random_device{}() | 1u;
  if (seed_used) *seed_used = seed;
  std::vector<CheckResult> results;
  detail::Checker checker(seed, results);
  detail::check_gemms(checker);
  detail::check_elementwise(checker);
  detail::check_losses(checker);
  detail::check_moe(checker);
  return results;
}

std::string format_check_results(const std::vector<CheckResult>& results, uint64_t seed) {
  std::string out;
  char line[256];
  int failed = 0;
  for (const auto& r : results) {
    std::snprintf(line, sizeof line, "%-4s %-30s %-34s rel_err %.3e  tol %.1e%s%s\n",
                  r.passed ? "ok" : "FAIL", r.op.c_str(), r.variant.c_str(), r.rel_error,
                  r.tolerance, r.note.empty() ? "" : "  ", r.note.c_str());
    out += line;
    failed += r.passed ? 0 : 1;
  }
  std::snprintf(line, sizeof line, "%zu checks, %d failed (seed %llu)\n", results.size(), failed,
                static_cast<unsigned long long>(seed));
  out += line;
  return out;
}

}  // namespace meshscope::kernels::cuda
