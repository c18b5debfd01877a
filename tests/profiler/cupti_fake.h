// A stand-in for libcupti's activity side in tests (as Kineto's MockCuptiActivities): it lays real
// CUpti_Activity* structs out in buffers the way CUPTI does (walked by the real
// cuptiActivityGetNextRecord, which needs no driver), keeps a per-thread external correlation
// stack, and hands buffers over at flush() in a chosen order, with a chosen number of drops.
// Like CUPTI it records only the kinds start() enabled, and nothing once stopped.
#pragma once

#include <cupti.h>

#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "profiler/capture/cupti/cupti_api.h"

namespace meshscope::capture::cupti::testing {

// Real CUPTI records packed back to back, each at an 8-byte boundary.
class SyntheticBuffer {
 public:
  template <typename Record>
  SyntheticBuffer& add(const Record& r) {
    static_assert(sizeof(Record) % 8 == 0, "CUPTI records are 8-byte multiples");
    const size_t at = bytes_.size();
    bytes_.resize(at + sizeof(Record));
    std::memcpy(bytes_.data() + at, &r, sizeof(Record));
    return *this;
  }
  size_t size() const { return bytes_.size(); }
  CompletedBuffer complete(uint64_t dropped = 0) const;

 private:
  std::vector<uint8_t> bytes_;
};

// Record makers with the fields the capture reads; the rest zero, as CUPTI leaves unused ones.
// Every record maker puts its op in context 1 unless told otherwise.
CUpti_ActivityKernel10 kernel_record(const char* name, uint64_t start, uint64_t end,
                                     uint32_t device, uint32_t stream, uint32_t correlation,
                                     uint32_t context = 1);
CUpti_ActivityMemcpy6 memcpy_record(CUpti_ActivityMemcpyKind kind, uint64_t bytes, uint64_t start,
                                    uint64_t end, uint32_t device, uint32_t stream,
                                    uint32_t correlation);
CUpti_ActivityMemcpyPtoP4 peer_copy_record(uint64_t bytes, uint64_t start, uint64_t end,
                                           uint32_t src, uint32_t dst, uint32_t stream,
                                           uint32_t correlation);
CUpti_ActivityMemset4 memset_record(uint64_t bytes, uint64_t start, uint64_t end, uint32_t device,
                                    uint32_t stream, uint32_t correlation);
CUpti_ActivityAPI runtime_record(CUpti_runtime_api_trace_cbid cbid, uint64_t start, uint64_t end,
                                 uint32_t thread, uint32_t correlation);
CUpti_ActivitySynchronization2 sync_record(CUpti_ActivitySynchronizationType type, uint64_t start,
                                           uint64_t end, uint32_t correlation, uint32_t stream);
CUpti_ActivityExternalCorrelation external_record(
    uint64_t external_id, uint32_t correlation,
    CUpti_ExternalCorrelationKind kind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
CUpti_ActivityMarker2 marker_start(uint32_t id, uint64_t t, uint32_t thread, const char* name,
                                   const char* domain);
CUpti_ActivityMarker2 marker_end(uint32_t id, uint64_t t, uint32_t thread);
CUpti_ActivityMarkerData2 marker_payload(uint32_t id, uint64_t payload);

// The fake CUPTI. Thread-safe where CUPTI is: launches and the external stack from any thread.
class FakeCupti final : public CuptiApi {
 public:
  // cupti_ns = host_ns + offset_ns + drift_ppm * 1e-6 * (host_ns - origin)
  FakeCupti(int64_t offset_ns = 0, double drift_ppm = 0);

  // CuptiApi
  void start(std::span<const CUpti_ActivityKind> kinds, BufferHandler on_complete) override;
  void flush() override;
  void stop() override;
  int64_t timestamp_ns() override;
  NextRecord next_record(uint8_t* buffer, size_t valid_bytes, CUpti_Activity*& record) override;
  std::string callback_name(bool driver, uint32_t cbid) override;
  void push_external_id(uint64_t id) override;
  void pop_external_id() override;
  StreamKey stream_key(CUstream stream) override;
  uint64_t dropped_since_read(std::span<const CUstream> streams) override;

  // Test controls.
  int64_t to_cupti(int64_t host_ns) const;
  void map_stream(CUstream stream, uint32_t id, uint32_t context = 1) {
    stream_keys_[stream] = {context, id};
  }
  // stream_key() of this stream throws, as the real one does when cuStreamGetCtx fails.
  void fail_stream(CUstream stream) { failing_streams_.insert(stream); }
  // Queues a buffer for the next flush(), or hands it over right now (as CUPTI's thread does).
  void queue(CompletedBuffer b);
  void deliver_now(CompletedBuffer b);
  // flush() hands queued buffers over in reverse order when set (out-of-order completion).
  void set_reverse_delivery(bool on) { reverse_ = on; }
  // Records per buffer before a new one starts (small values split runs over many buffers).
  void set_records_per_buffer(size_t n) { records_per_buffer_ = n; }
  // The next `n` launched records are lost, and reported as dropped with the next buffer.
  void drop_next(uint64_t n) { to_drop_ += n; }
  // `n` records lost after the last buffer completed: only dropped_since_read() reports them.
  void drop_after_last_buffer(uint64_t n) { trailing_dropped_ += n; }
  // A GPU op launched from the calling thread: the runtime API record, the external correlation
  // of the top of the thread's stack (if any) and the kernel or copy record, as CUPTI emits them.
  void launch_kernel(const char* name, uint32_t device, uint32_t stream, int64_t gpu_begin_host_ns,
                     int64_t gpu_end_host_ns);
  void launch_copy(CUpti_ActivityMemcpyKind kind, uint64_t bytes, uint32_t device, uint32_t stream,
                   int64_t gpu_begin_host_ns, int64_t gpu_end_host_ns);
  // An NVTX push/pop on the calling thread as CUPTI records it once NVTX is injected: a MARKER
  // start (and a MARKER_DATA payload) at the push, a MARKER end at the pop.
  void nvtx_push(const std::string& name, uint64_t payload, const std::string& domain);
  void nvtx_pop();
  // Ids pushed on the external correlation stack are not linked to launches when set (as when
  // CUPTI lost the EXTERNAL_CORRELATION records): labels must then come from NVTX.
  void set_ignore_external_ids(bool on) { ignore_external_ = on; }

  std::vector<std::string> calls;           // "start", "stop", "flush", in order
  std::vector<CUpti_ActivityKind> enabled;  // the kinds start() was given, in order
  std::vector<uint64_t> pushed_ids;         // every id pushed, in order (all threads)
  int open_ids() const;                     // pushes not yet popped, over all threads

 private:
  template <typename Record>
  void emit(const Record& r);  // appends to the current buffer, honouring drops
  // The runtime call of a launch from the calling thread over [begin, end) (host clock) and the
  // external correlation of the top of the thread's stack (if any); returns the correlation id
  // the launched op's record takes. Called with mutex_ held.
  uint32_t emit_launch_call(CUpti_runtime_api_trace_cbid cbid, int64_t begin_host_ns,
                            int64_t end_host_ns);
  uint32_t thread_id() const;
  void seal_current();

  int64_t offset_ns_;
  double drift_ppm_;
  int64_t origin_ns_;
  BufferHandler handler_;
  bool started_ = false;
  bool reverse_ = false;
  size_t records_per_buffer_ = 1000;
  uint64_t to_drop_ = 0;
  uint64_t dropped_pending_ = 0;
  uint64_t trailing_dropped_ = 0;
  uint32_t next_correlation_ = 1;
  bool ignore_external_ = false;
  uint32_t next_marker_ = 1;
  std::set<CUpti_ActivityKind> on_;  // kinds recorded now
  std::map<CUstream, StreamKey> stream_keys_;
  std::set<CUstream> failing_streams_;
  std::deque<std::string> strings_;                         // names the marker records point at
  std::map<uint32_t, std::vector<uint32_t>> open_markers_;  // per thread
  mutable std::mutex mutex_;
  std::map<uint32_t, std::vector<uint64_t>> stacks_;  // per thread
  SyntheticBuffer current_;
  size_t current_records_ = 0;
  std::vector<CompletedBuffer> queued_;
};

}  // namespace meshscope::capture::cupti::testing
