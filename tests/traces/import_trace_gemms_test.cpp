// GEMM ops of a Kineto trace with shapes, joined to the kernels they launched
// (traces/import/trace_gemms.h). The real trace's facts were found in its raw JSON with Python
// (json.load of the fixture; for each cpu_op aten::addmm / aten::mm, the cuda_runtime calls on its
// thread inside its interval and the kernels of their correlation ids), not from this code's
// output: B200 vLLM TP8 rank 0 has 109 such ops, 36 each of addmm 888 x 2880 by 2880 x 640, 888 x
// 512 by 512 x 2880 and 888 x 2880 by 2880 x 128, and one mm 1 x 2880 by 2880 x 25136, all bf16,
// each launching one nvjet kernel; their kernels sum to 287.4, 227.6, 236.2 and 33.5 us.
#include "traces/import/trace_gemms.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <tuple>

#include <unistd.h>

#include "tests/remove_at_exit.h"

namespace meshscope::traces {
namespace {

std::filesystem::path write_trace(const std::string& name, const std::string& events,
                                  const std::string& top = R"("record_shapes": 1, )") {
  const std::filesystem::path p = std::filesystem::temp_directory_path() /
                                  ("meshscope_trace_gemms_" + std::to_string(::getpid()) + name);
  std::ofstream(p) << "{" << top << R"("traceEvents": [)" << events << "]}";
  meshscope::testing::remove_at_exit(p);
  return p;
}

// aten::linear calling aten::addmm (bias, [64, 32] x [32, 16]); its GEMM kernel and a split-k
// reduction launched inside addmm, a bias kernel launched inside linear but after addmm.
const char* kLinear =
    R"({"ph":"X","cat":"cpu_op","name":"aten::linear","pid":1,"tid":1,"ts":100,"dur":50,"args":{"Input Dims":[[64,32],[16,32],[16]],"Input type":["c10::BFloat16","c10::BFloat16","c10::BFloat16"]}},
{"ph":"X","cat":"cpu_op","name":"aten::addmm","pid":1,"tid":1,"ts":105,"dur":30,"args":{"Input Dims":[[16],[64,32],[32,16],[],[]],"Input type":["c10::BFloat16","c10::BFloat16","c10::BFloat16","Scalar","Scalar"]}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":110,"dur":4,"args":{"correlation":21}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":120,"dur":4,"args":{"correlation":22}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":140,"dur":4,"args":{"correlation":23}},
{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":200,"dur":8,"args":{"correlation":21}},
{"ph":"X","cat":"kernel","name":"splitk_reduce","pid":0,"tid":7,"ts":208,"dur":2,"args":{"correlation":22}},
{"ph":"X","cat":"kernel","name":"bias","pid":0,"tid":7,"ts":210,"dur":3,"args":{"correlation":23}})";

TEST(TraceGemms, AnOpsKernelsAreThoseItsLaunchesStartedNotItsCallers) {
  const TraceGemms t = read_trace_gemms(write_trace("linear.json", kLinear));
  EXPECT_TRUE(t.record_shapes);
  ASSERT_EQ(t.gemms.size(), 1u);
  const TraceGemm& g = t.gemms[0];
  EXPECT_EQ(g.op, "aten::addmm");
  EXPECT_EQ(g.dtype, "c10::BFloat16");
  EXPECT_EQ(std::make_tuple(g.b, g.m, g.n, g.k),
            std::make_tuple(int64_t{1}, int64_t{64}, int64_t{16}, int64_t{32}));
  EXPECT_EQ(g.kernels, 2);  // the GEMM and its reduction; not the bias kernel linear launched
  EXPECT_NEAR(g.kernel_s, 10e-6, 1e-12);
  EXPECT_DOUBLE_EQ(g.flops(), 2.0 * 64 * 16 * 32);
}

TEST(TraceGemms, BatchedOpsAndWhatIsLeftOutIsCounted) {
  const std::string events = std::string(kLinear) + R"(,
{"ph":"X","cat":"cpu_op","name":"aten::bmm","pid":1,"tid":2,"ts":300,"dur":10,"args":{"Input Dims":[[4,8,16],[4,16,32]],"Input type":["c10::Half","c10::Half"]}},
{"ph":"X","cat":"cuda_runtime","name":"cuLaunchKernel","pid":1,"tid":2,"ts":305,"dur":1,"args":{"correlation":31}},
{"ph":"X","cat":"kernel","name":"bmm","pid":0,"tid":7,"ts":400,"dur":5,"args":{"correlation":31}},
{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":500,"dur":10,"args":{}},
{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":600,"dur":10,"args":{"Input Dims":[[8,16],[8,16]]}},
{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":700,"dur":10,"args":{"Input Dims":[[8,16],[16,4]]}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":3,"ts":705,"dur":1,"args":{"correlation":41}},
{"ph":"X","cat":"kernel","name":"elsewhere","pid":0,"tid":7,"ts":800,"dur":5,"args":{"correlation":41}})";
  const TraceGemms t = read_trace_gemms(write_trace("mixed.json", events, ""));
  EXPECT_FALSE(t.record_shapes);
  ASSERT_EQ(t.gemms.size(), 2u);
  const TraceGemm& b = t.gemms[1];
  EXPECT_EQ(b.op, "aten::bmm");
  EXPECT_EQ(b.dtype, "c10::Half");
  EXPECT_EQ(std::make_tuple(b.b, b.m, b.n, b.k),
            std::make_tuple(int64_t{4}, int64_t{8}, int64_t{32}, int64_t{16}));
  EXPECT_NEAR(b.kernel_s, 5e-6, 1e-12);
  // No dims, and dims whose inner sizes do not agree: without shapes. The third mm's only launch
  // is on another thread: without kernels.
  EXPECT_EQ(t.without_shapes, 2);
  EXPECT_EQ(t.without_kernels, 1);
}

// Shapes that are no shapes (nested as deep as the reader allows, sizes that are not whole
// numbers of 1 or more, the wrong rank) leave the op out; the reader's own bounds refuse deeper.
TEST(TraceGemms, HostileShapesAreLeftOutOrRefused) {
  auto mm = [](const std::string& dims) {
    return R"({"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":0,"dur":5,"args":{"Input Dims":)" +
           dims + "}}";
  };
  const std::string deep = std::string(120, '[') + std::string(120, ']');
  const TraceGemms t = read_trace_gemms(write_trace(
      "hostile.json", mm(deep) + "," + mm("[[1e300,5],[5,2]]") + "," + mm("[[-4,5],[5,2]]") + "," +
                          mm("[[4,5,6],[6,2]]") + "," + mm(R"("[[4,5],[5,2]]")")));
  EXPECT_TRUE(t.gemms.empty());
  EXPECT_EQ(t.without_shapes, 5);
  const std::string deeper = std::string(200, '[') + std::string(200, ']');
  EXPECT_THROW(read_trace_gemms(write_trace("deeper.json", mm(deeper))), ImportError);
  EXPECT_THROW(read_trace_gemms(write_trace("cut.json", mm("[[4,5],[5,2]]").substr(0, 60))),
               ImportError);
}

TEST(TraceGemms, AnNsightExportIsRefusedByName) {
  const std::filesystem::path p = std::filesystem::path(MESHSCOPE_SOURCE_DIR) /
                                  "tests/fixtures/nsys/h100_fuser_report1_schema3.16.sqlite.gz";
  try {
    read_trace_gemms(p);
    FAIL() << "an Nsight export was read as a Kineto trace";
  } catch (const ImportError& e) {
    EXPECT_NE(std::string(e.what()).find("Kineto JSON"), std::string::npos) << e.what();
  }
}

TEST(TraceGemms, RealB200TraceGivesItsGemmsAndTheirKernelTime) {
  const TraceGemms t = read_trace_gemms(std::filesystem::path(MESHSCOPE_SOURCE_DIR) /
                                        "tests/fixtures/hta/b200_vllm_tp8_rank0_no_python.json.gz");
  EXPECT_TRUE(t.record_shapes);
  EXPECT_EQ(t.without_shapes, 0);
  EXPECT_EQ(t.without_kernels, 0);
  ASSERT_EQ(t.gemms.size(), 109u);
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::pair<int, double>> by_shape;
  for (const TraceGemm& g : t.gemms) {
    EXPECT_EQ(g.dtype, "c10::BFloat16");
    EXPECT_EQ(g.kernels, 1);
    auto& [count, seconds] = by_shape[{g.m, g.n, g.k}];
    ++count;
    seconds += g.kernel_s;
    // Below the B200's dense bf16 peak, 2.25 PFLOP/s (NVIDIA HGX B200 datasheet: 4.5 PFLOP/s
    // per GPU with 2:4 sparsity, half without): a kernel joined to the wrong op would not be.
    EXPECT_LT(g.flops() / g.kernel_s, 2.25e15);
  }
  using S = std::tuple<int64_t, int64_t, int64_t>;
  const std::map<S, std::pair<int, double>> want = {{S{888, 640, 2880}, {36, 287.4e-6}},
                                                    {S{888, 2880, 512}, {36, 227.6e-6}},
                                                    {S{888, 128, 2880}, {36, 236.2e-6}},
                                                    {S{1, 25136, 2880}, {1, 33.5e-6}}};
  ASSERT_EQ(by_shape.size(), want.size());
  for (const auto& [shape, w] : want) {
    const auto it = by_shape.find(shape);
    ASSERT_NE(it, by_shape.end());
    EXPECT_EQ(it->second.first, w.first);
    EXPECT_NEAR(it->second.second, w.second, 0.06e-6);
  }
}

}  // namespace
}  // namespace meshscope::traces
