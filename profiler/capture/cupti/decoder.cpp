// The switch from CUPTI record structs (CUDA 13: Kernel10, Memcpy6, MemcpyPtoP4, Memset4,
// Synchronization2, API, ExternalCorrelation, Marker2, MarkerData2) to plain records.
#include "profiler/capture/cupti/decoder.h"

#include <cxxabi.h>

#include <cstdlib>
#include <limits>
#include <memory>

namespace meshscope::capture::cupti {
namespace {

int64_t ns(uint64_t t) { return static_cast<int64_t>(t); }
std::string copy_string(const char* s) { return s != nullptr ? std::string(s) : std::string(); }

// False for an interval CUPTI could not time: a zero end (never filled in, e.g. a kernel still
// running when the buffer was flushed) or an end before its start; counts it as untimed.
bool timed(uint64_t start, uint64_t end, RecordSet& out) {
  if (start != 0 && end != 0 && end >= start) return true;
  ++out.untimed_records;
  return false;
}

// CUPTI reports kernels by their mangled names ("_Z22ncclDevKernel_SendRecv..."): demangle, so
// names read as written and NCCL kernels can be recognised by prefix.
std::string kernel_name(const char* mangled) {
  if (mangled == nullptr) return {};
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> plain(
      abi::__cxa_demangle(mangled, nullptr, nullptr, &status), &std::free);
  return status == 0 && plain ? std::string(plain.get()) : std::string(mangled);
}

// The fields every timed GPU activity record has under the same names (start, end, deviceId,
// contextId, streamId, correlationId), as an op of `kind` appended to out.ops; nullptr for an
// untimed record.
template <typename Record>
GpuOp* add_op(const Record& r, GpuOpKind kind, RecordSet& out) {
  if (!timed(r.start, r.end, out)) return nullptr;
  GpuOp& op = out.ops.emplace_back();
  op.kind = kind;
  op.begin_ns = ns(r.start);
  op.end_ns = ns(r.end);
  op.device = r.deviceId;
  op.context = r.contextId;
  op.stream = r.streamId;
  op.correlation = r.correlationId;
  return &op;
}

void decode_kernel(const CUpti_ActivityKernel10& k, RecordSet& out) {
  if (GpuOp* op = add_op(k, GpuOpKind::kKernel, out)) op->name = kernel_name(k.name);
}

void decode_memcpy(const CUpti_ActivityMemcpy6& m, RecordSet& out) {
  if (GpuOp* op = add_op(m, GpuOpKind::kMemcpy, out)) {
    op->copy = copy_direction(m.copyKind);
    op->src_device = op->dst_device = m.deviceId;
    op->bytes = static_cast<int64_t>(m.bytes);
  }
}

void decode_peer_copy(const CUpti_ActivityMemcpyPtoP4& m, RecordSet& out) {
  if (GpuOp* op = add_op(m, GpuOpKind::kMemcpy, out)) {
    op->copy = CopyDirection::kPeerToPeer;
    op->src_device = m.srcDeviceId;
    op->dst_device = m.dstDeviceId;
    op->bytes = static_cast<int64_t>(m.bytes);
  }
}

void decode_memset(const CUpti_ActivityMemset4& m, RecordSet& out) {
  if (GpuOp* op = add_op(m, GpuOpKind::kMemset, out)) op->bytes = static_cast<int64_t>(m.bytes);
}

void decode_sync(const CUpti_ActivitySynchronization2& s, RecordSet& out) {
  if (!timed(s.start, s.end, out)) return;
  SyncWait w;
  w.begin_ns = ns(s.start);
  w.end_ns = ns(s.end);
  w.correlation = s.correlationId;
  w.stream = s.streamId;
  w.type = static_cast<uint8_t>(s.type);
  out.syncs.push_back(w);
}

void decode_api(CuptiApi& api, const CUpti_ActivityAPI& a, bool driver, RecordSet& out) {
  if (!timed(a.start, a.end, out)) return;
  ApiCall call;
  call.begin_ns = ns(a.start);
  call.end_ns = ns(a.end);
  call.thread = a.threadId;
  call.correlation = a.correlationId;
  call.cbid = a.cbid;
  call.driver = driver;
  call.name = api.callback_name(driver, a.cbid);
  out.api_calls.push_back(std::move(call));
}

void decode_marker(const CUpti_ActivityMarker2& m, RecordSet& out) {
  if (m.timestamp == 0) {  // "timestamp information could not be collected for the marker"
    ++out.untimed_records;
    return;
  }
  MarkerEvent e;
  if (m.flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
    e.edge = MarkerEvent::Edge::kStart;
  } else if (m.flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
    e.edge = MarkerEvent::Edge::kEnd;
  } else {
    e.edge = MarkerEvent::Edge::kInstant;
  }
  e.id = m.id;
  e.t_ns = ns(m.timestamp);
  e.thread = m.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? m.objectId.pt.threadId : 0;
  e.name = copy_string(m.name);
  e.domain = copy_string(m.domain);
  out.markers.push_back(std::move(e));
}

void decode_marker_data(const CUpti_ActivityMarkerData2& d, RecordSet& out) {
  // The marker sets an unsigned 64-bit payload; the same bits as a signed one are taken alike.
  if (d.payloadKind == CUPTI_METRIC_VALUE_KIND_UINT64) {
    out.payloads.push_back({d.id, d.payload.metricValueUint64});
  } else if (d.payloadKind == CUPTI_METRIC_VALUE_KIND_INT64) {
    out.payloads.push_back({d.id, static_cast<uint64_t>(d.payload.metricValueInt64)});
  }
}

}  // namespace

CopyDirection copy_direction(uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      return CopyDirection::kHostToDevice;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      return CopyDirection::kDeviceToHost;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
      return CopyDirection::kDeviceToDevice;
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return CopyDirection::kPeerToPeer;
    default:
      return CopyDirection::kOther;
  }
}

void decode_buffer(CuptiApi& api, uint8_t* buffer, size_t valid_bytes, RecordSet& out) {
  CUpti_Activity* record = nullptr;
  for (;;) {
    const NextRecord next = api.next_record(buffer, valid_bytes, record);
    if (next == NextRecord::kEnd) break;
    if (next == NextRecord::kIncomplete) {
      ++out.incomplete_buffers;
      break;
    }
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        decode_kernel(*reinterpret_cast<const CUpti_ActivityKernel10*>(record), out);
        break;
      case CUPTI_ACTIVITY_KIND_MEMCPY:
        decode_memcpy(*reinterpret_cast<const CUpti_ActivityMemcpy6*>(record), out);
        break;
      case CUPTI_ACTIVITY_KIND_MEMCPY2:
        decode_peer_copy(*reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(record), out);
        break;
      case CUPTI_ACTIVITY_KIND_MEMSET:
        decode_memset(*reinterpret_cast<const CUpti_ActivityMemset4*>(record), out);
        break;
      case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
        decode_sync(*reinterpret_cast<const CUpti_ActivitySynchronization2*>(record), out);
        break;
      case CUPTI_ACTIVITY_KIND_RUNTIME:
      case CUPTI_ACTIVITY_KIND_DRIVER:
        decode_api(api, *reinterpret_cast<const CUpti_ActivityAPI*>(record),
                   record->kind == CUPTI_ACTIVITY_KIND_DRIVER, out);
        break;
      case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const auto& x = *reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
        if (x.externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) {
          out.links.push_back({x.correlationId, x.externalId});
        }
        break;
      }
      case CUPTI_ACTIVITY_KIND_MARKER:
        decode_marker(*reinterpret_cast<const CUpti_ActivityMarker2*>(record), out);
        break;
      case CUPTI_ACTIVITY_KIND_MARKER_DATA:
        decode_marker_data(*reinterpret_cast<const CUpti_ActivityMarkerData2*>(record), out);
        break;
      default:
        ++out.ignored_records;
        break;
    }
  }
}

void RecordSet::append(RecordSet&& o) {
  auto move_all = [](auto& dst, auto& src) {
    dst.insert(dst.end(), std::make_move_iterator(src.begin()), std::make_move_iterator(src.end()));
  };
  move_all(ops, o.ops);
  move_all(api_calls, o.api_calls);
  move_all(syncs, o.syncs);
  move_all(links, o.links);
  move_all(markers, o.markers);
  move_all(payloads, o.payloads);
  dropped_records += o.dropped_records;
  ignored_records += o.ignored_records;
  untimed_records += o.untimed_records;
  buffers += o.buffers;
  incomplete_buffers += o.incomplete_buffers;
}

}  // namespace meshscope::capture::cupti
