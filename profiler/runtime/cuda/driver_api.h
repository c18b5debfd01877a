// The driver-API calls the cuda-virtual backend needs (green contexts), reached through
// cudaGetDriverEntryPointByVersion instead of linking libcuda: binaries then start on machines
// without a driver and fall back to the cpu backend there.
#pragma once

#include <cuda.h>

#include <optional>
#include <string>

namespace meshscope::runtime::cuda {

struct DriverApi {
  decltype(&::cuDeviceGet) device_get = nullptr;
  decltype(&::cuDeviceGetDevResource) device_get_dev_resource = nullptr;
  decltype(&::cuDevSmResourceSplitByCount) sm_resource_split_by_count = nullptr;
  decltype(&::cuDevResourceGenerateDesc) dev_resource_generate_desc = nullptr;
  decltype(&::cuGreenCtxCreate) green_ctx_create = nullptr;
  decltype(&::cuGreenCtxDestroy) green_ctx_destroy = nullptr;
  decltype(&::cuGreenCtxStreamCreate) green_ctx_stream_create = nullptr;
  decltype(&::cuCtxFromGreenCtx) ctx_from_green_ctx = nullptr;
  decltype(&::cuCtxSetCurrent) ctx_set_current = nullptr;
  decltype(&::cuGetErrorName) get_error_name = nullptr;
};

// Resolves every entry point (CUDA 13 ABI); nullopt with *why_not set when one is missing.
std::optional<DriverApi> load_driver_api(std::string* why_not);

// "cuGreenCtxCreate: CUDA_ERROR_INVALID_VALUE"; throws std::runtime_error unless CUDA_SUCCESS.
void check_driver(const DriverApi& api, CUresult status, const char* call);

}  // namespace meshscope::runtime::cuda
