// The fake CUPTI of cupti_fake.h.
#include "tests/profiler/cupti_fake.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "profiler/runtime/clock.h"

namespace meshscope::capture::cupti::testing {

CompletedBuffer SyntheticBuffer::complete(uint64_t dropped) const {
  CompletedBuffer b{ActivityBuffer(std::max<size_t>(bytes_.size(), 8)), bytes_.size(), dropped};
  if (!bytes_.empty()) std::memcpy(b.buffer.data(), bytes_.data(), bytes_.size());
  return b;
}

namespace {

// The fields every timed, correlated record has under the same names: GPU activities, runtime
// calls, synchronizations.
template <typename Record>
Record timed_record(CUpti_ActivityKind kind, uint64_t start, uint64_t end, uint32_t correlation) {
  Record r{};
  r.kind = kind;
  r.start = start;
  r.end = end;
  r.correlationId = correlation;
  return r;
}

// A timed GPU activity record: also where it ran (the decoder's add_op reads these back).
template <typename Record>
Record gpu_record(CUpti_ActivityKind kind, uint64_t start, uint64_t end, uint32_t device,
                  uint32_t stream, uint32_t correlation, uint32_t context = 1) {
  auto r = timed_record<Record>(kind, start, end, correlation);
  r.deviceId = device;
  r.contextId = context;
  r.streamId = stream;
  return r;
}

}  // namespace

CUpti_ActivityKernel10 kernel_record(const char* name, uint64_t start, uint64_t end,
                                     uint32_t device, uint32_t stream, uint32_t correlation,
                                     uint32_t context) {
  auto k = gpu_record<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, start, end,
                                              device, stream, correlation, context);
  k.name = name;
  return k;
}

CUpti_ActivityMemcpy6 memcpy_record(CUpti_ActivityMemcpyKind kind, uint64_t bytes, uint64_t start,
                                    uint64_t end, uint32_t device, uint32_t stream,
                                    uint32_t correlation) {
  auto m = gpu_record<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY, start, end, device, stream,
                                             correlation);
  m.copyKind = static_cast<uint8_t>(kind);
  m.bytes = bytes;
  m.copyCount = 1;
  return m;
}

CUpti_ActivityMemcpyPtoP4 peer_copy_record(uint64_t bytes, uint64_t start, uint64_t end,
                                           uint32_t src, uint32_t dst, uint32_t stream,
                                           uint32_t correlation) {
  auto m = gpu_record<CUpti_ActivityMemcpyPtoP4>(CUPTI_ACTIVITY_KIND_MEMCPY2, start, end, src,
                                                 stream, correlation);
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
  m.bytes = bytes;
  m.srcDeviceId = src;
  m.dstDeviceId = dst;
  return m;
}

CUpti_ActivityMemset4 memset_record(uint64_t bytes, uint64_t start, uint64_t end, uint32_t device,
                                    uint32_t stream, uint32_t correlation) {
  auto m = gpu_record<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET, start, end, device, stream,
                                             correlation);
  m.bytes = bytes;
  return m;
}

CUpti_ActivityAPI runtime_record(CUpti_runtime_api_trace_cbid cbid, uint64_t start, uint64_t end,
                                 uint32_t thread, uint32_t correlation) {
  auto a = timed_record<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME, start, end, correlation);
  a.cbid = cbid;
  a.processId = static_cast<uint32_t>(::getpid());
  a.threadId = thread;
  return a;
}

CUpti_ActivitySynchronization2 sync_record(CUpti_ActivitySynchronizationType type, uint64_t start,
                                           uint64_t end, uint32_t correlation, uint32_t stream) {
  auto s = timed_record<CUpti_ActivitySynchronization2>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, start,
                                                        end, correlation);
  s.type = type;
  s.streamId = stream;
  return s;
}

CUpti_ActivityExternalCorrelation external_record(uint64_t external_id, uint32_t correlation,
                                                  CUpti_ExternalCorrelationKind kind) {
  CUpti_ActivityExternalCorrelation x{};
  x.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
  x.externalKind = kind;
  x.externalId = external_id;
  x.correlationId = correlation;
  return x;
}

CUpti_ActivityMarker2 marker_start(uint32_t id, uint64_t t, uint32_t thread, const char* name,
                                   const char* domain) {
  CUpti_ActivityMarker2 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MARKER;
  m.flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
  m.timestamp = t;
  m.id = id;
  m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  m.objectId.pt.processId = static_cast<uint32_t>(::getpid());
  m.objectId.pt.threadId = thread;
  m.name = name;
  m.domain = domain;
  return m;
}

CUpti_ActivityMarker2 marker_end(uint32_t id, uint64_t t, uint32_t thread) {
  CUpti_ActivityMarker2 m = marker_start(id, t, thread, nullptr, nullptr);
  m.flags = CUPTI_ACTIVITY_FLAG_MARKER_END;
  return m;
}

CUpti_ActivityMarkerData2 marker_payload(uint32_t id, uint64_t payload) {
  CUpti_ActivityMarkerData2 d{};
  d.kind = CUPTI_ACTIVITY_KIND_MARKER_DATA;
  d.id = id;
  d.payloadKind = CUPTI_METRIC_VALUE_KIND_UINT64;
  d.payload.metricValueUint64 = payload;
  return d;
}

FakeCupti::FakeCupti(int64_t offset_ns, double drift_ppm)
    : offset_ns_(offset_ns), drift_ppm_(drift_ppm), origin_ns_(runtime::host_now_ns()) {}

void FakeCupti::start(std::span<const CUpti_ActivityKind> kinds, BufferHandler on_complete) {
  calls.push_back("start");
  handler_ = std::move(on_complete);
  std::lock_guard lock(mutex_);
  enabled.assign(kinds.begin(), kinds.end());
  on_.insert(kinds.begin(), kinds.end());
  started_ = true;
}

void FakeCupti::seal_current() {
  if (current_records_ == 0 && dropped_pending_ == 0) return;
  queued_.push_back(current_.complete(dropped_pending_));
  dropped_pending_ = 0;
  current_ = SyntheticBuffer();
  current_records_ = 0;
}

void FakeCupti::flush() {
  calls.push_back("flush");
  std::vector<CompletedBuffer> out;
  {
    std::lock_guard lock(mutex_);
    seal_current();
    out.swap(queued_);
  }
  if (reverse_) std::reverse(out.begin(), out.end());
  for (auto& b : out) handler_(std::move(b));
}

void FakeCupti::stop() {
  calls.push_back("stop");
  std::lock_guard lock(mutex_);
  on_.clear();
  started_ = false;
}

int64_t FakeCupti::to_cupti(int64_t host_ns) const {
  return host_ns + offset_ns_ +
         std::llround(drift_ppm_ * 1e-6 * static_cast<double>(host_ns - origin_ns_));
}

int64_t FakeCupti::timestamp_ns() { return to_cupti(runtime::host_now_ns()); }

NextRecord FakeCupti::next_record(uint8_t* buffer, size_t valid_bytes, CUpti_Activity*& record) {
  // The real walker, read by the real rule: the synthetic layout must be the one CUPTI reads.
  return next_record_of(cuptiActivityGetNextRecord(buffer, valid_bytes, &record));
}

std::string FakeCupti::callback_name(bool, uint32_t cbid) {
  switch (cbid) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
      return "cudaLaunchKernel";
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020:
      return "cudaMemcpyAsync";
    case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020:
      return "cudaStreamSynchronize";
    default:
      return "api " + std::to_string(cbid);
  }
}

uint32_t FakeCupti::thread_id() const { return static_cast<uint32_t>(::syscall(SYS_gettid)); }

void FakeCupti::push_external_id(uint64_t id) {
  std::lock_guard lock(mutex_);
  if (!ignore_external_) stacks_[thread_id()].push_back(id);
  pushed_ids.push_back(id);
}

void FakeCupti::pop_external_id() {
  std::lock_guard lock(mutex_);
  auto& stack = stacks_[thread_id()];
  if (!stack.empty()) stack.pop_back();
}

int FakeCupti::open_ids() const {
  std::lock_guard lock(mutex_);
  int n = 0;
  for (const auto& [thread, stack] : stacks_) n += static_cast<int>(stack.size());
  return n;
}

StreamKey FakeCupti::stream_key(CUstream stream) {
  if (failing_streams_.count(stream) != 0) {
    throw std::runtime_error("CUPTI capture: cuStreamGetCtx failed (fake)");
  }
  auto it = stream_keys_.find(stream);
  return it != stream_keys_.end() ? it->second : StreamKey{};
}

uint64_t FakeCupti::dropped_since_read(std::span<const CUstream>) {
  std::lock_guard lock(mutex_);
  return std::exchange(trailing_dropped_, 0);
}

void FakeCupti::queue(CompletedBuffer b) {
  std::lock_guard lock(mutex_);
  queued_.push_back(std::move(b));
}

void FakeCupti::deliver_now(CompletedBuffer b) { handler_(std::move(b)); }

template <typename Record>
void FakeCupti::emit(const Record& r) {
  if (on_.count(r.kind) == 0) return;  // CUPTI records only the enabled kinds
  if (to_drop_ > 0) {
    --to_drop_;
    ++dropped_pending_;
    return;
  }
  if (current_records_ == records_per_buffer_) seal_current();
  current_.add(r);
  ++current_records_;
}

uint32_t FakeCupti::emit_launch_call(CUpti_runtime_api_trace_cbid cbid, int64_t begin_host_ns,
                                     int64_t end_host_ns) {
  const uint32_t correlation = next_correlation_++;
  const uint32_t thread = thread_id();
  emit(runtime_record(cbid, to_cupti(begin_host_ns), to_cupti(end_host_ns), thread, correlation));
  if (const auto& stack = stacks_[thread]; !stack.empty()) {
    emit(external_record(stack.back(), correlation));
  }
  return correlation;
}

void FakeCupti::launch_kernel(const char* name, uint32_t device, uint32_t stream,
                              int64_t gpu_begin_host_ns, int64_t gpu_end_host_ns) {
  const int64_t now = runtime::host_now_ns();
  std::lock_guard lock(mutex_);
  const uint32_t correlation =
      emit_launch_call(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, now, now + 2000);
  emit(kernel_record(name, to_cupti(gpu_begin_host_ns), to_cupti(gpu_end_host_ns), device, stream,
                     correlation));
}

void FakeCupti::launch_copy(CUpti_ActivityMemcpyKind kind, uint64_t bytes, uint32_t device,
                            uint32_t stream, int64_t gpu_begin_host_ns, int64_t gpu_end_host_ns) {
  const int64_t now = runtime::host_now_ns();
  std::lock_guard lock(mutex_);
  const uint32_t correlation =
      emit_launch_call(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, now, now + 1500);
  emit(memcpy_record(kind, bytes, to_cupti(gpu_begin_host_ns), to_cupti(gpu_end_host_ns), device,
                     stream, correlation));
}

void FakeCupti::nvtx_push(const std::string& name, uint64_t payload, const std::string& domain) {
  const int64_t now = runtime::host_now_ns();
  std::lock_guard lock(mutex_);
  const uint32_t id = next_marker_++;
  const uint32_t thread = thread_id();
  open_markers_[thread].push_back(id);
  const char* n = strings_.emplace_back(name).c_str();
  const char* d = strings_.emplace_back(domain).c_str();
  emit(marker_start(id, static_cast<uint64_t>(to_cupti(now)), thread, n, d));
  emit(marker_payload(id, payload));
}

void FakeCupti::nvtx_pop() {
  const int64_t now = runtime::host_now_ns();
  std::lock_guard lock(mutex_);
  const uint32_t thread = thread_id();
  auto& open = open_markers_[thread];
  if (open.empty()) return;
  emit(marker_end(open.back(), static_cast<uint64_t>(to_cupti(now)), thread));
  open.pop_back();
}

}  // namespace meshscope::capture::cupti::testing
