// Loads driver entry points through the CUDA runtime (cudaGetDriverEntryPointByVersion).
#include "profiler/runtime/cuda/driver_api.h"

#include <cuda_runtime_api.h>

#include <stdexcept>

namespace meshscope::runtime::cuda {
namespace {

constexpr unsigned kAbiVersion = 13000;  // the layouts of CUdevResource & co. in this cuda.h

template <typename Fn>
bool resolve(const char* symbol, Fn& out, std::string* why_not) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  const cudaError_t status =
      cudaGetDriverEntryPointByVersion(symbol, &fn, kAbiVersion, cudaEnableDefault, &found);
  if (status != cudaSuccess || found != cudaDriverEntryPointSuccess || fn == nullptr) {
    if (why_not != nullptr) {
      *why_not = std::string("driver entry point ") + symbol + " unavailable (" +
                 (status != cudaSuccess ? cudaGetErrorName(status) : "symbol not found") + ")";
    }
    (void)cudaGetLastError();
    return false;
  }
  out = reinterpret_cast<Fn>(fn);
  return true;
}

}  // namespace

std::optional<DriverApi> load_driver_api(std::string* why_not) {
  DriverApi api;
  const bool ok = resolve("cuDeviceGet", api.device_get, why_not) &&
                  resolve("cuDeviceGetDevResource", api.device_get_dev_resource, why_not) &&
                  resolve("cuDevSmResourceSplitByCount", api.sm_resource_split_by_count, why_not) &&
                  resolve("cuDevResourceGenerateDesc", api.dev_resource_generate_desc, why_not) &&
                  resolve("cuGreenCtxCreate", api.green_ctx_create, why_not) &&
                  resolve("cuGreenCtxDestroy", api.green_ctx_destroy, why_not) &&
                  resolve("cuGreenCtxStreamCreate", api.green_ctx_stream_create, why_not) &&
                  resolve("cuCtxFromGreenCtx", api.ctx_from_green_ctx, why_not) &&
                  resolve("cuCtxSetCurrent", api.ctx_set_current, why_not) &&
                  resolve("cuGetErrorName", api.get_error_name, why_not);
  if (!ok) return std::nullopt;
  return api;
}

void check_driver(const DriverApi& api, CUresult status, const char* call) {
  if (status == CUDA_SUCCESS) return;
  const char* name = "unknown CUresult";
  if (api.get_error_name != nullptr) api.get_error_name(status, &name);
  throw std::runtime_error(std::string(call) + ": " + name);
}

}  // namespace meshscope::runtime::cuda
