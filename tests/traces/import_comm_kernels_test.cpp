// Communication kernels beyond NCCL, by name and on real traces. The expected kernels and counts
// were found in the raw JSON with Python (json.load of the fixture, Counter of "name" over
// cat == "kernel"), not from this code's output:
//   B200 vLLM TP8: 73 "void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16,
//     16>(...)" and 1 ncclDevKernel_AllGather_RING_LL, of 768 kernels;
//   H800 DeepSeek-V3: 32 dpsk::ep::internode:: kernels (12 cached_notify, 8 combine, 8 dispatch,
//     4 notify_dispatch) of 963; its 4 dpsk::ep::cuda::get_dispatch_layout are local compute.
#include "traces/import/comm_kernels.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "traces/analysis.h"
#include "traces/import/load_trace.h"

namespace meshscope::traces {
namespace {

using importer::classify_comm_kernel;
using importer::CommKernelRules;
using importer::CommLibrary;

const std::filesystem::path kFixtures =
    std::filesystem::path(MESHSCOPE_SOURCE_DIR) / "tests/fixtures/hta";

TEST(CommKernels, KnownLibrariesByName) {
  EXPECT_EQ(
      classify_comm_kernel("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)")
          .library,
      CommLibrary::kNccl);
  EXPECT_EQ(
      classify_comm_kernel("void vllm::cross_device_reduce_2stage<__nv_bfloat16, 8>(...)").library,
      CommLibrary::kVllmCustom);
  EXPECT_EQ(classify_comm_kernel(
                "void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(...)")
                .library,
            CommLibrary::kSymmetricMemory);
  EXPECT_EQ(classify_comm_kernel("void deep_ep::internode_ll::dispatch<false, 8>(...)").library,
            CommLibrary::kDeepEp);
  EXPECT_EQ(classify_comm_kernel("void dpsk::ep::internode::combine<false, 8>(int4*)").library,
            CommLibrary::kDeepEp);
  EXPECT_EQ(classify_comm_kernel("void nvshmemi_transfer_rma_nbi<int>(int*)").library,
            CommLibrary::kNvshmem);
  EXPECT_EQ(
      classify_comm_kernel("void dpsk::ep::cuda::get_dispatch_layout<256, 32, 8>(long)").library,
      CommLibrary::kNone);
  EXPECT_EQ(classify_comm_kernel("void at::native::elementwise_kernel<128, 4>(int)").library,
            CommLibrary::kNone);
}

TEST(CommKernels, UserPatternsAddKernels) {
  const CommKernelRules rules({"^my_alltoall", "ring_exchange"});
  EXPECT_EQ(rules.classify("my_alltoall_kernel(float*)").library, CommLibrary::kUser);
  EXPECT_EQ(rules.classify("void ns::ring_exchange<4>()").library, CommLibrary::kUser);
  EXPECT_EQ(rules.classify("gemm").library, CommLibrary::kNone);
  EXPECT_THROW(CommKernelRules({"(unclosed"}), std::regex_error);
}

// Kernels per span kind on the GPU devices of a trace.
std::map<SpanKind, int> gpu_kinds(const Timeline& t) {
  std::map<SpanKind, int> n;
  for (const Span& s : t.spans) {
    if (is_device_activity(s.kind) && !is_host_only(t.devices[s.device])) ++n[s.kind];
  }
  return n;
}

TEST(CommKernels, VllmMultimemAllReduceIsCommunicationOnB200) {
  const Timeline t = load_trace(kFixtures / "b200_vllm_tp8_rank0_no_python.json.gz");
  auto n = gpu_kinds(t);
  EXPECT_EQ(n[SpanKind::kCollective], 73 + 1);
  const TimelineAnalysis a = analyze(t);
  ASSERT_EQ(a.devices.size(), 1u);
  // The 73 all-reduce kernels take far more than the 22 µs the NCCL kernel alone did.
  EXPECT_GT(a.devices[0].communication_ns, 1'000'000);
}

TEST(CommKernels, DeepEpDispatchCombineIsCommunicationOnH800) {
  const Timeline t = load_trace(kFixtures / "h800_deepseek_v3_rank0.json.gz");
  EXPECT_EQ(gpu_kinds(t)[SpanKind::kCollective], 32);
  EXPECT_GT(analyze(t).devices.at(0).communication_ns, 0);
}

TEST(CommKernels, UserPatternThroughImportOptions) {
  ImportOptions options;
  options.comm_kernel_patterns = {"get_dispatch_layout"};
  const Timeline t = load_trace(kFixtures / "h800_deepseek_v3_rank0.json.gz", options);
  EXPECT_EQ(gpu_kinds(t)[SpanKind::kCollective], 32 + 4);
}

}  // namespace
}  // namespace meshscope::traces
