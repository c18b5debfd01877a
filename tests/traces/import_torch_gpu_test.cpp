// A torch pipelining job on GPUs, in Kineto's layout (hand-written, two ranks): kernels take the
// stage, microbatch and phase of the action whose op launched them (the ac2g launch flow), else of
// the gpu_user_annotation action range around them on their stream; the GPU stays the device (the
// host thread is not turned into one); NCCL SendRecv kernels move data the way their action says
// and are paired across ranks.
#include <gtest/gtest.h>

#include <string>

#include "tests/traces/import_test_util.h"
#include "traces/analysis.h"
#include "traces/chrome_export.h"
#include "traces/import/load_trace.h"
#include "traces/import/torch_pipeline.h"

namespace meshscope::traces {
namespace {

using testing::TempFile;
using testing::trace_of;

std::string dist(int rank) {
  return R"("distributedInfo":{"backend":"nccl","rank":)" + std::to_string(rank) +
         R"(,"world_size":2},"baseTimeNanoseconds":1000)";
}

// A host op at [ts, ts+dur) on thread 10 that launches `kernel` at kts on stream 7 (correlation
// id).
std::string launch(int id, int ts, int kts, const std::string& kernel, int kdur) {
  const std::string i = std::to_string(id);
  return R"({"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":10,"ts":)" +
         std::to_string(ts) + R"(,"dur":1,"args":{"correlation":)" + i + "}},\n" +
         R"({"ph":"X","cat":"kernel","name":")" + kernel + R"(","pid":0,"tid":7,"ts":)" +
         std::to_string(kts) + R"(,"dur":)" + std::to_string(kdur) +
         R"(,"args":{"device":0,"stream":7,"correlation":)" + i + "}},\n" + R"({"ph":"s","id":)" +
         i + R"(,"pid":1,"tid":10,"ts":)" + std::to_string(ts) +
         R"(,"cat":"ac2g","name":"ac2g"},)" + "\n" + R"({"ph":"f","id":)" + i +
         R"(,"pid":0,"tid":7,"ts":)" + std::to_string(kts) +
         R"(,"cat":"ac2g","name":"ac2g","bp":"e"})";
}

std::string range(const std::string& name, int ts, int dur, bool gpu = false) {
  return gpu ? R"({"ph":"X","cat":"gpu_user_annotation","name":")" + name +
                   R"(","pid":0,"tid":7,"ts":)" + std::to_string(ts) + R"(,"dur":)" +
                   std::to_string(dur) + "}"
             : R"({"ph":"X","cat":"user_annotation","name":")" + name +
                   R"(","pid":1,"tid":10,"ts":)" + std::to_string(ts) + R"(,"dur":)" +
                   std::to_string(dur) + "}";
}

const Span& named(const Timeline& t, std::string_view name, int rank) {
  for (const Span& s : t.spans) {
    if (t.span_name(s) == name && t.devices[s.device].rank == rank) return s;
  }
  throw std::runtime_error("no span " + std::string(name));
}

// The two ranks of the job below: stage 0 on rank 0 (F of microbatch 0, sent by an NCCL
// SendRecv kernel), stage 1 on rank 1 (receives it, runs F on it).
Timeline two_rank_gpu_job() {
  const std::string r0 = trace_of(
      {range("PP:0F0", 0, 10), launch(1, 2, 20, "ampere_sgemm", 5), range("PP:0SEND_F0", 12, 5),
       launch(2, 13, 30, "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", 8),
       // a kernel no op launched, inside a stream-side action range
       range("PP:0F1", 40, 10, true),
       R"({"ph":"X","cat":"kernel","name":"orphan_relu","pid":0,"tid":7,"ts":42,"dur":2,)"
       R"("args":{"device":0,"stream":7}})"},
      dist(0));
  // rank 1 runs stage 1: receives microbatch 0's activation, then runs F on it.
  const std::string r1 =
      trace_of({range("PP:1RECV_F0", 0, 5),
                launch(1, 1, 30, "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", 9),
                range("PP:1F0", 6, 10), launch(2, 7, 45, "ampere_sgemm", 5)},
               dist(1));
  TempFile f0(".json", r0), f1(".json", r1);
  const std::vector<std::filesystem::path> files = {f0.path(), f1.path()};
  return load_traces(files);
}

TEST(TorchGpuImport, KernelsTakeTheirLaunchingActionAndTransfersPair) {
  const Timeline t = two_rank_gpu_job();

  // The GPUs are the devices; the host threads stay host lanes.
  for (const Device& d : t.devices) {
    if (d.name.find("GPU") != std::string::npos) continue;
    for (const Lane& l : d.lanes) EXPECT_EQ(l.kind, LaneKind::kHost) << d.name;
  }
  const Span& gemm0 = named(t, "ampere_sgemm", 0);
  EXPECT_EQ(gemm0.stage, 0);
  EXPECT_EQ(gemm0.microbatch, 0);
  EXPECT_EQ(gemm0.phase, Phase::kForward);
  EXPECT_EQ(gemm0.kind, SpanKind::kCompute);
  const Span& orphan = named(t, "orphan_relu", 0);
  EXPECT_EQ(orphan.stage, 0);
  EXPECT_EQ(orphan.microbatch, 1);
  const Span& gemm1 = named(t, "ampere_sgemm", 1);
  EXPECT_EQ(gemm1.stage, 1);
  EXPECT_EQ(gemm1.microbatch, 0);

  const std::string sendrecv = "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)";
  const Span& send = named(t, sendrecv, 0);
  const Span& recv = named(t, sendrecv, 1);
  EXPECT_EQ(send.kind, SpanKind::kSend);
  EXPECT_EQ(recv.kind, SpanKind::kRecv);
  EXPECT_EQ(recv.stage, 1);
  bool paired = false;
  for (const Flow& f : t.flows) {
    paired = paired || (&t.spans[f.from] == &send && &t.spans[f.to] == &recv);
  }
  EXPECT_TRUE(paired);
  EXPECT_EQ(t.metadata.at("pipeline_stage_owner"), "0 1");
  // The GPU's stage compute makes the bubble attribution available.
  EXPECT_TRUE(analyze(t).has_stage_annotations);
}

// `meshscope convert` of the job, read back, is the job: the export's spans carry their labels and
// its devices their pipeline coordinates, and reading it does not label it as a torch trace again
// (which took the merged ranks for one, and moved every device to one rank's pp coordinate).
TEST(TorchGpuImport, AnExportedJobReadsBackWithEveryRanksCoordinates) {
  const Timeline t = two_rank_gpu_job();
  const Timeline back = load_trace_bytes(export_chrome_json(t), "job.json");
  ASSERT_EQ(back.devices.size(), t.devices.size());
  for (size_t d = 0; d < t.devices.size(); ++d) {
    EXPECT_EQ(back.devices[d].name, t.devices[d].name);
    EXPECT_EQ(back.devices[d].coord, t.devices[d].coord) << t.devices[d].name;
  }
  ASSERT_EQ(back.spans.size(), t.spans.size());
  for (size_t i = 0; i < t.spans.size(); ++i) {
    EXPECT_EQ(back.spans[i].stage, t.spans[i].stage) << t.span_name(t.spans[i]);
    EXPECT_EQ(back.spans[i].microbatch, t.spans[i].microbatch) << t.span_name(t.spans[i]);
    EXPECT_EQ(back.spans[i].phase, t.spans[i].phase) << t.span_name(t.spans[i]);
  }
  EXPECT_EQ(back.metadata.count("pipeline_actions"), 0u);
}

}  // namespace
}  // namespace meshscope::traces
