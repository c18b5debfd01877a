// The CUDA ops against the CPU reference (on a device; skipped without one), and the pieces of the
// check harness and error handling that must hold everywhere.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/cuda/check.h"
#include "kernels/cuda/check_harness.h"
#include "kernels/cuda/device.h"
#include "kernels/cuda/ops.h"
#include "kernels/cuda/raii.h"

namespace meshscope::kernels::cuda {
namespace {

TEST(CudaCheckHarness, RelativeErrorIsTheNormRatio) {
  const std::vector<float> ref = {3.f, 4.f};  // ‖ref‖ = 5
  const std::vector<float> out = {3.f, 4.5f};
  EXPECT_DOUBLE_EQ(relative_error(out, ref), 0.1);
  EXPECT_DOUBLE_EQ(relative_error(ref, ref), 0.0);
}

TEST(CudaCheckHarness, PoisonedElementFailsEveryTolerance) {
  // An op that leaves one element untouched leaves the NaN poison there: that must fail.
  const std::vector<float> ref = {1.f, 2.f, 3.f};
  const std::vector<float> out = {1.f, std::numeric_limits<float>::quiet_NaN(), 3.f};
  EXPECT_FALSE(relative_error(out, ref) < kBf16Tolerance);
  const std::vector<float> inf = {1.f, std::numeric_limits<float>::infinity(), 3.f};
  EXPECT_FALSE(relative_error(inf, ref) < kBf16Tolerance);
}

TEST(CudaCheckHarness, SizeMismatchNeverPasses) {
  EXPECT_FALSE(relative_error(std::vector<float>{1.f}, std::vector<float>{1.f, 1.f}) < 1.0);
}

TEST(CudaCheckHarness, ZeroReferenceComparesAbsolutely) {
  EXPECT_DOUBLE_EQ(relative_error(std::vector<float>{0.f, 0.f}, std::vector<float>{0.f, 0.f}), 0);
  EXPECT_GT(relative_error(std::vector<float>{0.5f, 0.f}, std::vector<float>{0.f, 0.f}), 0.1);
}

TEST(CudaErrors, CheckNamesFileLineAndCall) {
  try {
    MESHSCOPE_CUDA_CHECK(cudaErrorInvalidValue);
    FAIL() << "no exception";
  } catch (const CudaError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cuda_ops_test.cpp:"), std::string::npos) << what;
    EXPECT_NE(what.find("cudaErrorInvalidValue"), std::string::npos) << what;
    EXPECT_EQ(e.code(), static_cast<int>(cudaErrorInvalidValue));
  }
  EXPECT_NO_THROW(MESHSCOPE_CUDA_CHECK(cudaSuccess));
  EXPECT_THROW(MESHSCOPE_CUBLAS_CHECK(CUBLAS_STATUS_NOT_INITIALIZED), CudaError);
}

struct CountingRelease {
  static inline int released = 0;
  void operator()(int) const noexcept { ++released; }
};

TEST(CudaRaii, OwnersReleaseExactlyOnceAcrossMoves) {
  CountingRelease::released = 0;
  {
    UniqueHandle<int, CountingRelease> a(7);
    UniqueHandle<int, CountingRelease> b(std::move(a));
    EXPECT_FALSE(a);
    EXPECT_EQ(b.get(), 7);
    UniqueHandle<int, CountingRelease> c(9);
    c = std::move(b);  // releases 9, takes 7
    EXPECT_EQ(CountingRelease::released, 1);
    EXPECT_EQ(c.get(), 7);
  }
  EXPECT_EQ(CountingRelease::released, 2);
}

TEST(CudaOps, PrecisionNamesRoundTrip) {
  for (size_t i = 0; i < kGemmPrecisionNames.size(); ++i) {
    const auto p = static_cast<GemmPrecision>(i);
    EXPECT_EQ(parse_gemm_precision(name(p)), p);
  }
  EXPECT_FALSE(parse_gemm_precision("fp16").has_value());
}

TEST(CudaDevice, ProbeSaysWhyThereIsNoDevice) {
  const DeviceProbe probe = probe_devices();
  if (probe.available()) GTEST_SKIP() << "a CUDA device is present";
  EXPECT_FALSE(probe.reason.empty());
  EXPECT_EQ(no_device_message(probe).rfind("no CUDA device: ", 0), 0u);
}

TEST(CudaRaii, ARanksPoolKeepsFreedMemoryAndInsertsNoHiddenDependencies) {
  const DeviceProbe probe = probe_devices();
  if (!probe.available()) GTEST_SKIP() << no_device_message(probe);
  const MemPool pool = make_device_pool(0);
  ASSERT_TRUE(pool);
  uint64_t threshold = 0;
  ASSERT_EQ(cudaMemPoolGetAttribute(pool.get(), cudaMemPoolAttrReleaseThreshold, &threshold),
            cudaSuccess);
  EXPECT_EQ(threshold, UINT64_MAX);
  int internal = 1, opportunistic = 1;
  ASSERT_EQ(
      cudaMemPoolGetAttribute(pool.get(), cudaMemPoolReuseAllowInternalDependencies, &internal),
      cudaSuccess);
  ASSERT_EQ(cudaMemPoolGetAttribute(pool.get(), cudaMemPoolReuseAllowOpportunistic, &opportunistic),
            cudaSuccess);
  EXPECT_EQ(internal, 0);
  EXPECT_EQ(opportunistic, 0);
  // Freed memory stays in the pool across a synchronisation (the default pool would trim it).
  Stream stream = make_stream();
  void* p = nullptr;
  ASSERT_EQ(cudaMallocFromPoolAsync(&p, size_t{64} << 20, pool.get(), stream.get()), cudaSuccess);
  ASSERT_EQ(cudaFreeAsync(p, stream.get()), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess);
  uint64_t reserved = 0;
  ASSERT_EQ(cudaMemPoolGetAttribute(pool.get(), cudaMemPoolAttrReservedMemCurrent, &reserved),
            cudaSuccess);
  EXPECT_GE(reserved, uint64_t{64} << 20);
}

TEST(CudaOps, EveryOpMatchesTheCpuReference) {
  const DeviceProbe probe = probe_devices();
  if (!probe.available()) GTEST_SKIP() << no_device_message(probe);
  uint64_t seed = 0;
  const auto results = run_kernel_checks({}, &seed);
  ASSERT_FALSE(results.empty());
  for (const auto& r : results) {
    EXPECT_TRUE(r.passed) << r.op << " [" << r.variant << "] rel_error " << r.rel_error
                          << " >= " << r.tolerance << " " << r.note << " (seed " << seed << ")";
  }
}

}  // namespace
}  // namespace meshscope::kernels::cuda
