// CUPTI activity records decoded into plain values (names copied, CUPTI's clock kept): what the
// capture collects from buffers and what the Timeline builder reads. No CUPTI types here.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace meshscope::capture::cupti {

enum class GpuOpKind : uint8_t { kKernel = 0, kMemcpy = 1, kMemset = 2, kCount };
inline constexpr std::array<std::string_view, static_cast<size_t>(GpuOpKind::kCount)>
    kGpuOpKindNames = {"kernel", "memcpy", "memset"};

// CUpti_ActivityMemcpyKind values that move data between two device buffers.
enum class CopyDirection : uint8_t {
  kOther = 0,
  kHostToDevice,
  kDeviceToHost,
  kDeviceToDevice,
  kPeerToPeer,
  kCount
};

// Work that ran on a GPU stream.
struct GpuOp {
  GpuOpKind kind = GpuOpKind::kKernel;
  CopyDirection copy = CopyDirection::kOther;  // memcpy only
  int64_t begin_ns = 0;                        // CUPTI clock
  int64_t end_ns = 0;
  uint32_t device = 0;
  uint32_t context = 0;
  uint32_t stream = 0;
  uint32_t correlation = 0;  // = the launching API call's correlation id
  int64_t bytes = 0;         // memcpy/memset
  uint32_t src_device = 0;   // peer-to-peer memcpy
  uint32_t dst_device = 0;
  std::string name;  // kernel name; "" for copies and sets
};

// A CUDA runtime or driver API call on a host thread.
struct ApiCall {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  uint32_t thread = 0;  // system thread id (gettid)
  uint32_t correlation = 0;
  uint32_t cbid = 0;
  bool driver = false;
  std::string name;  // "cudaLaunchKernel"
};

// A host-side wait (stream, event or context synchronisation).
struct SyncWait {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  uint32_t correlation = 0;  // the API call that waited
  uint32_t stream = 0;       // waited-on stream; UINT32_MAX when not a stream wait
  uint8_t type = 0;          // CUpti_ActivitySynchronizationType
};

// Links a CUDA correlation id to the id pushed with cuptiActivityPushExternalCorrelationId.
struct ExternalLink {
  uint32_t correlation = 0;
  uint64_t external_id = 0;
};

// One NVTX event as CUPTI reports it: a range's start, its end, or an instant mark.
struct MarkerEvent {
  enum class Edge : uint8_t { kStart, kEnd, kInstant };
  Edge edge = Edge::kStart;
  uint32_t id = 0;  // shared by a range's start and end
  int64_t t_ns = 0;
  uint32_t thread = 0;
  std::string name;    // on start and instant events only
  std::string domain;  // "" for the default domain
};

// The payload attached to an NVTX range (meshscope puts the action's external id there).
struct MarkerPayload {
  uint32_t id = 0;
  uint64_t value = 0;
};

// Everything collected in one capture, in arrival order (buffers may complete out of order).
struct RecordSet {
  std::vector<GpuOp> ops;
  std::vector<ApiCall> api_calls;
  std::vector<SyncWait> syncs;
  std::vector<ExternalLink> links;
  std::vector<MarkerEvent> markers;
  std::vector<MarkerPayload> payloads;
  uint64_t dropped_records = 0;  // CUPTI ran out of buffer space and lost these
  uint64_t ignored_records = 0;  // kinds this capture does not use
  // Records CUPTI could not time (start or end 0, or end before start; cupti_activity.h: "a
  // value of 0 for both the start and end timestamps indicates that timestamp information could
  // not be collected"): dropped, since one of them would stretch a step window to the epoch.
  uint64_t untimed_records = 0;
  uint64_t buffers = 0;
  // Buffers whose walk ended before their last byte (an incomplete record, or a buffer CUPTI
  // could not walk): the records before that point are kept, the rest are lost.
  uint64_t incomplete_buffers = 0;

  void append(RecordSet&& other);
};

}  // namespace meshscope::capture::cupti
