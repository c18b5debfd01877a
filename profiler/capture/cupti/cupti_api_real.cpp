// The libcupti implementation of CuptiApi: buffer callbacks, activity kinds, timestamps and the
// external correlation stack.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "profiler/capture/cupti/cupti_api.h"
#include "profiler/capture/cupti/cupti_check.h"
#include "profiler/runtime/cuda/driver_api.h"

namespace meshscope::capture::cupti {

void check_cupti(CUptiResult status, const char* call, const char* file, int line) {
  if (status == CUPTI_SUCCESS) return;
  const char* text = "unknown CUPTI error";
  cuptiGetResultString(status, &text);
  throw kernels::cuda::CudaError(kernels::cuda::format_call_error(file, line, call, text),
                                 static_cast<int>(status));
}

bool warn_cupti(CUptiResult status, const char* call, const char* file, int line) noexcept {
  if (status == CUPTI_SUCCESS) return true;
  const char* text = "unknown CUPTI error";
  cuptiGetResultString(status, &text);
  std::fprintf(stderr, "meshscope: warning: %s:%d: %s: %s\n", file, line, call, text);
  return false;
}

NextRecord next_record_of(CUptiResult status) {
  switch (status) {
    case CUPTI_SUCCESS:
      return NextRecord::kRecord;
    case CUPTI_ERROR_MAX_LIMIT_REACHED:
      return NextRecord::kEnd;
    case CUPTI_ERROR_INVALID_KIND:
      return NextRecord::kIncomplete;
    default:
      MESHSCOPE_CUPTI_CHECK(status);
      return NextRecord::kEnd;  // not reached: the check throws
  }
}

namespace {

class RealCuptiApi;
// CUPTI's buffer callbacks carry no user pointer, so the started instance is found here.
std::atomic<RealCuptiApi*> g_active{nullptr};

class RealCuptiApi final : public CuptiApi {
 public:
  explicit RealCuptiApi(size_t buffer_bytes) : buffer_bytes_(buffer_bytes) {}
  ~RealCuptiApi() override {
    if (g_active.load() == this) {
      stop();
      flush();
      g_active.store(nullptr);
    }
  }

  void start(std::span<const CUpti_ActivityKind> kinds, BufferHandler on_complete) override {
    RealCuptiApi* expected = nullptr;
    if (!g_active.compare_exchange_strong(expected, this)) {
      throw std::runtime_error("CUPTI capture: another capture is already running in this process");
    }
    handler_ = std::move(on_complete);
    try {
      // System thread ids (gettid) so records match the ids the tracer takes on each rank thread.
      MESHSCOPE_CUPTI_CHECK(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM));
      MESHSCOPE_CUPTI_CHECK(
          cuptiActivityRegisterCallbacks(&RealCuptiApi::requested, &RealCuptiApi::completed));
      for (CUpti_ActivityKind kind : kinds) {
        MESHSCOPE_CUPTI_CHECK(cuptiActivityEnable(kind));
        enabled_.push_back(kind);
      }
    } catch (...) {
      stop();
      flush();  // CUPTI hands back any buffer it already took before they are freed with this
      g_active.store(nullptr);
      throw;
    }
  }

  void flush() override {
    MESHSCOPE_CUPTI_WARN(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  }

  void stop() override {
    for (CUpti_ActivityKind kind : enabled_) MESHSCOPE_CUPTI_WARN(cuptiActivityDisable(kind));
    enabled_.clear();
  }

  int64_t timestamp_ns() override {
    uint64_t t = 0;
    MESHSCOPE_CUPTI_CHECK(cuptiGetTimestamp(&t));
    return static_cast<int64_t>(t);
  }

  NextRecord next_record(uint8_t* buffer, size_t valid_bytes, CUpti_Activity*& record) override {
    return next_record_of(cuptiActivityGetNextRecord(buffer, valid_bytes, &record));
  }

  std::string callback_name(bool driver, uint32_t cbid) override {
    const char* name = nullptr;
    const auto domain = driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
    if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || name == nullptr) {
      return (driver ? "driver api " : "runtime api ") + std::to_string(cbid);
    }
    return name;
  }

  void push_external_id(uint64_t id) override {
    cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id);
  }
  void pop_external_id() override {
    uint64_t last = 0;
    cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
  }

  StreamKey stream_key(CUstream stream) override {
    StreamKey key;
    MESHSCOPE_CUPTI_CHECK(cuptiGetStreamIdEx(nullptr, stream, 0, &key.stream));
    CUcontext context = nullptr;
    const CUresult status = stream_context(stream, &context);
    if (status != CUDA_SUCCESS || context == nullptr) {
      throw std::runtime_error("CUPTI capture: cuStreamGetCtx failed (CUresult " +
                               std::to_string(static_cast<int>(status)) +
                               "): a stream's records cannot be told from another context's");
    }
    MESHSCOPE_CUPTI_CHECK(cuptiGetContextId(context, &key.context));
    return key;
  }

  uint64_t dropped_since_read(std::span<const CUstream> streams) override {
    uint64_t total = 0;
    size_t n = 0;
    if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &n) == CUPTI_SUCCESS) total += n;
    for (CUstream stream : streams) {
      CUcontext context = nullptr;
      uint32_t id = 0;
      if (stream_context(stream, &context) != CUDA_SUCCESS || context == nullptr) continue;
      if (cuptiGetStreamIdEx(context, stream, 0, &id) != CUPTI_SUCCESS) continue;
      n = 0;
      if (cuptiActivityGetNumDroppedRecords(context, id, &n) == CUPTI_SUCCESS) total += n;
    }
    return total;
  }

 private:
  static void CUPTIAPI requested(uint8_t** buffer, size_t* size, size_t* max_records) {
    *buffer = nullptr;
    *size = 0;
    *max_records = 0;  // as many as fit
    RealCuptiApi* self = g_active.load();
    if (self == nullptr) return;  // CUPTI counts the records it cannot store as dropped
    // No exception may cross back into CUPTI: without memory the records are dropped, as above.
    try {
      ActivityBuffer owned(self->buffer_bytes_);
      std::lock_guard lock(self->mutex_);
      const auto it = self->outstanding_.emplace(owned.data(), std::move(owned)).first;
      *buffer = it->second.data();
      *size = it->second.capacity();
    } catch (...) {
      *buffer = nullptr;
      *size = 0;
    }
  }

  static void CUPTIAPI completed(CUcontext context, uint32_t stream, uint8_t* buffer, size_t,
                                 size_t valid_bytes) {
    RealCuptiApi* self = g_active.load();
    if (self == nullptr || buffer == nullptr) return;
    CompletedBuffer done;
    {
      std::lock_guard lock(self->mutex_);
      auto it = self->outstanding_.find(buffer);
      if (it == self->outstanding_.end()) return;
      done.buffer = std::move(it->second);
      self->outstanding_.erase(it);
    }
    done.valid_bytes = valid_bytes;
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(context, stream, &dropped) == CUPTI_SUCCESS) {
      done.dropped = dropped;
    }
    self->handler_(std::move(done));
  }

  // cuStreamGetCtx through the runtime (the binary does not link libcuda; driver_api.h), at the
  // two-argument ABI: for a stream of a green context it gives the context cuCtxFromGreenCtx
  // gives (cuda.h), one per virtual device, where cuStreamGetCtx_v2 would give the primary one.
  static CUresult stream_context(CUstream stream, CUcontext* context) {
    static const auto get = [] {
      decltype(&::cuStreamGetCtx) fn = nullptr;
      MESHSCOPE_DRIVER_ENTRY(cuStreamGetCtx, 9020, fn, nullptr);
      return fn;
    }();
    return get != nullptr ? get(stream, context) : CUDA_ERROR_NOT_FOUND;
  }

  size_t buffer_bytes_;
  BufferHandler handler_;
  std::vector<CUpti_ActivityKind> enabled_;
  std::mutex mutex_;
  std::unordered_map<uint8_t*, ActivityBuffer> outstanding_;
};

}  // namespace

std::unique_ptr<CuptiApi> make_cupti_api(size_t buffer_bytes) {
  return std::make_unique<RealCuptiApi>(buffer_bytes);
}

}  // namespace meshscope::capture::cupti
