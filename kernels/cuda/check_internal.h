// Shared pieces of the check harness: random inputs, device upload/download, NaN poisoning and
// result recording. Internal to kernels/cuda's check files.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "kernels/cuda/check_harness.h"
#include "kernels/cuda/ops.h"

namespace meshscope::kernels::cuda::detail {

class Checker {
 public:
  Checker(uint64_t seed, std::vector<CheckResult>& results);

  Context& ctx() { return ctx_; }
  std::vector<float> random(size_t n, float lo = -1.f, float hi = 1.f);
  std::vector<int32_t> random_labels(size_t n, int classes);
  template <typename T>
  DeviceBuffer<T> upload(const std::vector<T>& host);
  // A device buffer of n floats filled with NaN (bytes 0xFF), so untouched elements show.
  DeviceBuffer<float> poisoned(size_t n);
  std::vector<float> download(const DeviceBuffer<float>& dev);
  void sync();

  // Records ‖out − ref‖/‖ref‖ against the tolerance.
  void expect_close(std::string op, std::string variant, const std::vector<float>& out,
                    const std::vector<float>& ref, double tolerance);
  void expect_close(std::string op, std::string variant, double out, double ref, double tolerance);
  void expect_true(std::string op, std::string variant, bool ok, std::string note);

 private:
  Stream stream_;
  Context ctx_;
  std::mt19937_64 rng_;
  std::vector<CheckResult>& results_;
};

template <typename T>
DeviceBuffer<T> Checker::upload(const std::vector<T>& host) {
  DeviceBuffer<T> dev(host.size());
  MESHSCOPE_CUDA_CHECK(
      cudaMemcpyAsync(dev.data(), host.data(), dev.bytes(), cudaMemcpyHostToDevice, ctx_.stream()));
  return dev;
}

void check_gemms(Checker& c);
void check_elementwise(Checker& c);
void check_losses(Checker& c);
void check_moe(Checker& c);

}  // namespace meshscope::kernels::cuda::detail
