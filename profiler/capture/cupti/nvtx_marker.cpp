// NVTX ranges in the "meshscope" domain carrying each action's external id as payload.
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdlib>
#include <string>

#include "profiler/capture/cupti/cupti_tracer.h"
#include "profiler/capture/cupti_entry.h"

namespace meshscope::capture::cupti {

std::string prepare_nvtx_injection() {
  // NVTX calls go nowhere unless a tool is injected; point NVTX at the libcupti this binary
  // loaded (unless the user chose another tool, e.g. Nsight Systems, which then sees the ranges).
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cuptiGetVersion), &info) != 0 && info.dli_fname != nullptr) {
    setenv("NVTX_INJECTION64_PATH", info.dli_fname, /*overwrite=*/0);
  }
  const char* path = std::getenv("NVTX_INJECTION64_PATH");
  return path != nullptr ? path : "";
}

namespace {

class NvtxMarker final : public RangeMarker {
 public:
  ~NvtxMarker() override {
    if (domain_ != nullptr) nvtxDomainDestroy(domain_);
  }

  void open() override {
    if (domain_ != nullptr) return;
    // Normally done before the backend started any thread (prepare_tracer); a no-op then.
    prepare_nvtx_injection();
    domain_ = nvtxDomainCreateA("meshscope");
  }

  void push(const std::string& label, uint64_t payload) override {
    nvtxEventAttributes_t a{};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = label.c_str();
    a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
    a.payload.ullValue = payload;
    nvtxDomainRangePushEx(domain_, &a);
  }
  void pop() override { nvtxDomainRangePop(domain_); }

 private:
  nvtxDomainHandle_t domain_ = nullptr;
};

}  // namespace

std::unique_ptr<RangeMarker> make_nvtx_marker() { return std::make_unique<NvtxMarker>(); }

}  // namespace meshscope::capture::cupti
