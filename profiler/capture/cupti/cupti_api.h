// The CUPTI calls the capture makes, behind a virtual interface (as Kineto's CuptiActivityApi):
// the real one talks to libcupti; tests substitute one that hands over synthetic buffers of real
// CUpti_Activity* records, so the record -> Timeline path runs without a GPU.
#pragma once

#include <cupti.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

namespace meshscope::capture::cupti {

// An activity buffer as CUPTI fills it: 8-byte aligned bytes, owned here. Not zeroed: CUPTI asks
// for one from whichever thread fills the last, a rank thread among them, and only the bytes it
// reports valid are read.
class ActivityBuffer {
 public:
  ActivityBuffer() = default;
  explicit ActivityBuffer(size_t bytes)
      : words_(std::make_unique_for_overwrite<uint64_t[]>((bytes + 7) / 8)),
        bytes_((bytes + 7) / 8 * 8) {}
  uint8_t* data() const { return reinterpret_cast<uint8_t*>(words_.get()); }
  size_t capacity() const { return bytes_; }

 private:
  std::unique_ptr<uint64_t[]> words_;
  size_t bytes_ = 0;
};

// A buffer CUPTI has finished with: `valid_bytes` of records, and how many records CUPTI dropped
// for lack of space up to then (cuptiActivityGetNumDroppedRecords).
struct CompletedBuffer {
  ActivityBuffer buffer;
  size_t valid_bytes = 0;
  uint64_t dropped = 0;
};

// The record kinds the capture enables, in the order it enables them. The NVTX kinds first:
// MARKER carries a range's start and end, MARKER_DATA its payload (the action's external id), and
// CUPTI only records NVTX events while they are on (cupti_activity.h: MARKER_DATA needs MARKER).
// DRIVER as well as RUNTIME: cuBLAS and NCCL launch their kernels through the driver API, and a
// kernel's correlation id is that of the API call that launched it, so without DRIVER records
// their kernels would have no external correlation.
inline constexpr CUpti_ActivityKind kCapturedKinds[] = {CUPTI_ACTIVITY_KIND_MARKER,
                                                        CUPTI_ACTIVITY_KIND_MARKER_DATA,
                                                        CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                                        CUPTI_ACTIVITY_KIND_MEMCPY,
                                                        CUPTI_ACTIVITY_KIND_MEMCPY2,
                                                        CUPTI_ACTIVITY_KIND_MEMSET,
                                                        CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
                                                        CUPTI_ACTIVITY_KIND_RUNTIME,
                                                        CUPTI_ACTIVITY_KIND_DRIVER,
                                                        CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};

// Where a stream's records say they ran: CUPTI stream ids are unique only within a context
// (cuptiGetStreamIdEx), and every green context is a context of its own.
struct StreamKey {
  uint32_t context = 0;  // cuptiGetContextId of the stream's context
  uint32_t stream = 0;   // cuptiGetStreamIdEx
};

// What cuptiActivityGetNextRecord says of the next record of a completed buffer.
enum class NextRecord {
  kRecord,      // CUPTI_SUCCESS: `record` is the next one
  kEnd,         // CUPTI_ERROR_MAX_LIMIT_REACHED: no more records
  kIncomplete,  // CUPTI_ERROR_INVALID_KIND: the rest is an incomplete or invalid record
                // (cupti_activity.h; a forced flush hands over buffers holding them, as after a
                // run stopped mid-kernel): the walk ends there, the records before it are kept
};
// The status -> NextRecord rule above; any other status throws kernels::cuda::CudaError.
NextRecord next_record_of(CUptiResult status);

class CuptiApi {
 public:
  // Called with each completed buffer, possibly from a CUPTI thread and in any order.
  using BufferHandler = std::function<void(CompletedBuffer)>;

  virtual ~CuptiApi() = default;

  // Registers the buffer callbacks and enables `kinds`. Throws std::runtime_error on failure.
  virtual void start(std::span<const CUpti_ActivityKind> kinds, BufferHandler on_complete) = 0;
  // Hands every buffer CUPTI holds, complete or not, to the handler before returning.
  virtual void flush() = 0;
  // Disables the kinds enabled by start(). Call flush() afterwards to collect the rest.
  virtual void stop() = 0;
  // CUPTI's clock (cuptiGetTimestamp), the clock of every record's timestamps.
  virtual int64_t timestamp_ns() = 0;
  // Walks a completed buffer as cuptiActivityGetNextRecord does: record == nullptr starts.
  virtual NextRecord next_record(uint8_t* buffer, size_t valid_bytes, CUpti_Activity*& record) = 0;
  // "cudaLaunchKernel" for a runtime callback id (cuptiGetCallbackName).
  virtual std::string callback_name(bool driver, uint32_t cbid) = 0;
  // The calling thread's external correlation stack (CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0).
  virtual void push_external_id(uint64_t id) = 0;
  virtual void pop_external_id() = 0;
  // The context and stream ids of a stream, as its records carry them (contextId, streamId).
  virtual StreamKey stream_key(CUstream stream) = 0;
  // Records dropped since their queue's count was last read (cuptiActivityGetNumDroppedRecords
  // resets it; each completed buffer reads its own queue's): CUPTI's global queue and those of
  // `streams`. Called after the last flush, for drops no buffer completed after.
  virtual uint64_t dropped_since_read(std::span<const CUstream> streams) = 0;
};

// The libcupti implementation. Only one may be started at a time per process (CUPTI's callbacks
// carry no user pointer); starting a second throws.
std::unique_ptr<CuptiApi> make_cupti_api(size_t buffer_bytes = size_t{8} << 20);

}  // namespace meshscope::capture::cupti
