// Loads driver entry points through the CUDA runtime (cudaGetDriverEntryPointByVersion).
#include "profiler/runtime/cuda/driver_api.h"

#include <cuda_runtime_api.h>

#include <stdexcept>

namespace meshscope::runtime::cuda {

bool resolve_driver_entry(const char* symbol, unsigned version, void** fn, std::string* why_not) {
  *fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  const cudaError_t status =
      cudaGetDriverEntryPointByVersion(symbol, fn, version, cudaEnableDefault, &found);
  if (status != cudaSuccess || found != cudaDriverEntryPointSuccess || *fn == nullptr) {
    if (why_not != nullptr) {
      *why_not = std::string("driver entry point ") + symbol + " unavailable (" +
                 (status != cudaSuccess ? cudaGetErrorName(status) : "symbol not found") + ")";
    }
    (void)cudaGetLastError();
    *fn = nullptr;
    return false;
  }
  return true;
}

std::optional<DriverApi> load_driver_api(std::string* why_not) {
  DriverApi api;
  // Each at its prototype's ABI version (driver_api.h); in CUDA 13.0's cudaTypedefs.h none of
  // these has a second one.
  const bool ok =
      MESHSCOPE_DRIVER_ENTRY(cuDeviceGet, 2000, api.device_get, why_not) &&
      MESHSCOPE_DRIVER_ENTRY(cuDeviceGetDevResource, 12040, api.device_get_dev_resource, why_not) &&
      MESHSCOPE_DRIVER_ENTRY(cuDevSmResourceSplitByCount, 12040, api.sm_resource_split_by_count,
                             why_not) &&
      MESHSCOPE_DRIVER_ENTRY(cuDevResourceGenerateDesc, 12040, api.dev_resource_generate_desc,
                             why_not) &&
      MESHSCOPE_DRIVER_ENTRY(cuGreenCtxCreate, 12040, api.green_ctx_create, why_not) &&
      MESHSCOPE_DRIVER_ENTRY(cuGreenCtxDestroy, 12040, api.green_ctx_destroy, why_not) &&
      MESHSCOPE_DRIVER_ENTRY(cuGreenCtxStreamCreate, 12050, api.green_ctx_stream_create, why_not) &&
      MESHSCOPE_DRIVER_ENTRY(cuCtxFromGreenCtx, 12040, api.ctx_from_green_ctx, why_not) &&
      MESHSCOPE_DRIVER_ENTRY(cuCtxSetCurrent, 4000, api.ctx_set_current, why_not) &&
      MESHSCOPE_DRIVER_ENTRY(cuGetErrorName, 6000, api.get_error_name, why_not);
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
