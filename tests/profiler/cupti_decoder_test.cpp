// Decoding real CUPTI record structs, laid out as CUPTI lays them out, into plain records.
#include <gtest/gtest.h>

#include "profiler/capture/cupti/decoder.h"
#include "tests/profiler/cupti_fake.h"

namespace meshscope::capture::cupti {
namespace {

using testing::FakeCupti;
using testing::SyntheticBuffer;

RecordSet decode(const SyntheticBuffer& synthetic) {
  FakeCupti api;
  CompletedBuffer b = synthetic.complete();
  RecordSet out;
  decode_buffer(api, b.buffer.data(), b.valid_bytes, out);
  return out;
}

TEST(CuptiDecoder, RealCuptiWalkerReadsEveryRecordOfTheSyntheticLayout) {
  SyntheticBuffer buf;
  buf.add(testing::runtime_record(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 1, 2, 7, 1))
      .add(testing::kernel_record("k", 3, 4, 0, 13, 1))
      .add(testing::memcpy_record(CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, 64, 5, 6, 0, 14, 2))
      .add(testing::peer_copy_record(64, 5, 6, 0, 1, 14, 3))
      .add(testing::memset_record(32, 7, 8, 0, 13, 4))
      .add(testing::sync_record(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, 9, 10, 5,
                                13))
      .add(testing::external_record(99, 1))
      .add(testing::marker_start(1, 11, 7, "F s0 mb0", "meshscope"))
      .add(testing::marker_payload(1, 99))
      .add(testing::marker_end(1, 12, 7));
  const RecordSet r = decode(buf);
  EXPECT_EQ(r.api_calls.size(), 1u);
  EXPECT_EQ(r.ops.size(), 4u);
  EXPECT_EQ(r.syncs.size(), 1u);
  EXPECT_EQ(r.links.size(), 1u);
  EXPECT_EQ(r.markers.size(), 2u);
  EXPECT_EQ(r.payloads.size(), 1u);
  EXPECT_EQ(r.ignored_records, 0u);
}

TEST(CuptiDecoder, RecordsWithoutTimestampsOrEndingBeforeTheyBeginAreDroppedAndCounted) {
  SyntheticBuffer buf;
  buf.add(testing::kernel_record("untimed", 0, 0, 0, 13, 1))
      .add(testing::kernel_record("no_end", 7, 0, 0, 13, 2))
      .add(testing::memcpy_record(CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, 64, 6, 5, 0, 14, 3))
      .add(testing::memset_record(32, 0, 8, 0, 13, 4))
      .add(testing::runtime_record(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 0, 2, 7, 5))
      .add(
          testing::sync_record(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, 9, 8, 5, 13))
      .add(testing::marker_start(1, 0, 7, "F s0 mb0", "meshscope"))
      .add(testing::kernel_record("timed", 3, 3, 0, 13, 6));  // zero length is a time
  const RecordSet r = decode(buf);
  ASSERT_EQ(r.ops.size(), 1u);
  EXPECT_EQ(r.ops[0].name, "timed");
  EXPECT_TRUE(r.api_calls.empty());
  EXPECT_TRUE(r.syncs.empty());
  EXPECT_TRUE(r.markers.empty());
  EXPECT_EQ(r.untimed_records, 7u);
  RecordSet sum;
  RecordSet more = decode(buf);
  sum.append(std::move(more));
  EXPECT_EQ(sum.untimed_records, 7u);
}

TEST(CuptiDecoder, KernelKeepsTimesPlaceAndACopyOfItsName) {
  std::string name = "ampere_sgemm_128x64_nn";
  SyntheticBuffer buf;
  buf.add(testing::kernel_record(name.c_str(), 1000, 2500, 2, 17, 42));
  const RecordSet r = decode(buf);
  name.assign("overwritten");  // CUPTI's string may go away: the record must own a copy
  ASSERT_EQ(r.ops.size(), 1u);
  const GpuOp& op = r.ops[0];
  EXPECT_EQ(op.kind, GpuOpKind::kKernel);
  EXPECT_EQ(op.begin_ns, 1000);
  EXPECT_EQ(op.end_ns, 2500);
  EXPECT_EQ(op.device, 2u);
  EXPECT_EQ(op.stream, 17u);
  EXPECT_EQ(op.correlation, 42u);
  EXPECT_EQ(op.name, "ampere_sgemm_128x64_nn");
}

TEST(CuptiDecoder, MangledKernelNamesAreDemangled) {
  SyntheticBuffer buf;
  buf.add(testing::kernel_record("_Z22ncclDevKernel_SendRecvPv", 1, 2, 0, 1, 1))
      .add(testing::kernel_record("not_mangled_kernel", 3, 4, 0, 1, 2));
  const RecordSet r = decode(buf);
  ASSERT_EQ(r.ops.size(), 2u);
  EXPECT_EQ(r.ops[0].name, "ncclDevKernel_SendRecv(void*)");
  EXPECT_EQ(r.ops[1].name, "not_mangled_kernel");
}

TEST(CuptiDecoder, CopiesAndSetsKeepDirectionAndBytes) {
  SyntheticBuffer buf;
  buf.add(testing::memcpy_record(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 4096, 1, 2, 0, 5, 1))
      .add(testing::memcpy_record(CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, 8192, 3, 4, 0, 5, 2))
      .add(testing::peer_copy_record(1 << 20, 5, 6, 1, 3, 9, 3))
      .add(testing::memset_record(128, 7, 8, 0, 5, 4));
  const RecordSet r = decode(buf);
  ASSERT_EQ(r.ops.size(), 4u);
  EXPECT_EQ(r.ops[0].copy, CopyDirection::kHostToDevice);
  EXPECT_EQ(r.ops[0].bytes, 4096);
  EXPECT_EQ(r.ops[1].copy, CopyDirection::kDeviceToDevice);
  EXPECT_EQ(r.ops[2].copy, CopyDirection::kPeerToPeer);
  EXPECT_EQ(r.ops[2].src_device, 1u);
  EXPECT_EQ(r.ops[2].dst_device, 3u);
  EXPECT_EQ(r.ops[2].bytes, 1 << 20);
  EXPECT_EQ(r.ops[3].kind, GpuOpKind::kMemset);
  EXPECT_EQ(r.ops[3].bytes, 128);
}

TEST(CuptiDecoder, ApiCallsAreNamedAndKeepTheirThread) {
  SyntheticBuffer buf;
  buf.add(
      testing::runtime_record(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 10, 20, 4242, 8));
  const RecordSet r = decode(buf);
  ASSERT_EQ(r.api_calls.size(), 1u);
  EXPECT_EQ(r.api_calls[0].name, "cudaLaunchKernel");
  EXPECT_EQ(r.api_calls[0].thread, 4242u);
  EXPECT_EQ(r.api_calls[0].correlation, 8u);
  EXPECT_FALSE(r.api_calls[0].driver);
}

TEST(CuptiDecoder, OnlyOurExternalCorrelationKindLinks) {
  SyntheticBuffer buf;
  buf.add(testing::external_record(5, 1))
      .add(testing::external_record(6, 2, CUPTI_EXTERNAL_CORRELATION_KIND_OPENACC));
  const RecordSet r = decode(buf);
  ASSERT_EQ(r.links.size(), 1u);
  EXPECT_EQ(r.links[0].external_id, 5u);
  EXPECT_EQ(r.links[0].correlation, 1u);
}

TEST(CuptiDecoder, MarkersKeepEdgeThreadNameDomainAndPayload) {
  SyntheticBuffer buf;
  buf.add(testing::marker_start(3, 100, 77, "B s1 mb2", "meshscope"))
      .add(testing::marker_payload(3, 0xABCDu))
      .add(testing::marker_end(3, 200, 77));
  const RecordSet r = decode(buf);
  ASSERT_EQ(r.markers.size(), 2u);
  EXPECT_EQ(r.markers[0].edge, MarkerEvent::Edge::kStart);
  EXPECT_EQ(r.markers[0].name, "B s1 mb2");
  EXPECT_EQ(r.markers[0].domain, "meshscope");
  EXPECT_EQ(r.markers[0].thread, 77u);
  EXPECT_EQ(r.markers[1].edge, MarkerEvent::Edge::kEnd);
  EXPECT_EQ(r.markers[1].t_ns, 200);
  ASSERT_EQ(r.payloads.size(), 1u);
  EXPECT_EQ(r.payloads[0].value, 0xABCDu);
}

TEST(CuptiDecoder, KindsItDoesNotUseAreCountedNotMisread) {
  CUpti_ActivityDeviceAttribute attr{};
  attr.kind = CUPTI_ACTIVITY_KIND_DEVICE_ATTRIBUTE;
  SyntheticBuffer buf;
  buf.add(attr).add(testing::kernel_record("k", 1, 2, 0, 1, 1));
  const RecordSet r = decode(buf);
  EXPECT_EQ(r.ignored_records, 1u);
  EXPECT_EQ(r.ops.size(), 1u);  // the walker stepped over the unknown record by its true size
}

TEST(CuptiDecoder, AnIncompleteRecordEndsTheBufferKeepingTheRecordsBeforeIt) {
  // What a forced flush hands over after a run stopped mid-kernel: libcupti's own walker answers
  // CUPTI_ERROR_INVALID_KIND at a record it cannot read (cupti_activity.h).
  CUpti_ActivityKernel10 incomplete{};
  incomplete.kind = CUPTI_ACTIVITY_KIND_INVALID;
  SyntheticBuffer buf;
  buf.add(testing::kernel_record("before", 3, 4, 0, 13, 1))
      .add(testing::memset_record(32, 5, 6, 0, 13, 2))
      .add(incomplete)
      .add(testing::kernel_record("after", 7, 8, 0, 13, 3));
  const RecordSet r = decode(buf);
  ASSERT_EQ(r.ops.size(), 2u);
  EXPECT_EQ(r.ops[0].name, "before");
  EXPECT_EQ(r.incomplete_buffers, 1u);
  EXPECT_EQ(
      decode(SyntheticBuffer().add(testing::kernel_record("k", 3, 4, 0, 13, 1))).incomplete_buffers,
      0u);
}

TEST(CuptiDecoder, TheWalkersStatusesAreARecordTheEndAnIncompleteRecordOrAnError) {
  EXPECT_EQ(next_record_of(CUPTI_SUCCESS), NextRecord::kRecord);
  EXPECT_EQ(next_record_of(CUPTI_ERROR_MAX_LIMIT_REACHED), NextRecord::kEnd);
  EXPECT_EQ(next_record_of(CUPTI_ERROR_INVALID_KIND), NextRecord::kIncomplete);
  EXPECT_THROW(next_record_of(CUPTI_ERROR_INVALID_PARAMETER), std::exception);
}

TEST(CuptiDecoder, EmptyBufferYieldsNothing) {
  const RecordSet r = decode(SyntheticBuffer());
  EXPECT_TRUE(r.ops.empty());
  EXPECT_EQ(r.ignored_records, 0u);
}

}  // namespace
}  // namespace meshscope::capture::cupti
