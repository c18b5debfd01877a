// The driver-API calls the cuda-virtual backend needs (green contexts), reached through
// cudaGetDriverEntryPointByVersion instead of linking libcuda: binaries then start on machines
// without a driver and fall back to the cpu backend there.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

#include <optional>
#include <string>
#include <type_traits>

namespace meshscope::runtime::cuda {

// Every driver entry point is asked for at the ABI version of the prototype this cuda.h declares
// under its plain name. cudaGetDriverEntryPointByVersion returns the newest ABI at or below the
// version asked for (cuda_runtime_api.h), so asking for the toolkit's own version gets a later ABI
// where there is one: cuStreamGetCtx at 13000 is cuStreamGetCtx_v2, with a third argument
// (cudaTypedefs.h: PFN_cuStreamGetCtx_v12050), called through the two-argument prototype.
// MESHSCOPE_DRIVER_ENTRY(fn, version, out, why_not) checks at compile time that
// PFN_<fn>_v<version> is the plain prototype's type, asks for exactly that version, and sets
// `out` (a decltype(&::fn)); false, with *why_not set when given, if the driver lacks it.
bool resolve_driver_entry(const char* symbol, unsigned version, void** fn, std::string* why_not);
#define MESHSCOPE_DRIVER_ENTRY(fn, version, out, why_not)                                   \
  ([&]() -> bool {                                                                          \
    static_assert(std::is_same_v<decltype(&::fn), PFN_##fn##_v##version>,                   \
                  #fn ": the plain prototype is not the ABI of version " #version);         \
    void* resolved = nullptr;                                                               \
    const bool found =                                                                      \
        ::meshscope::runtime::cuda::resolve_driver_entry(#fn, version, &resolved, why_not); \
    (out) = reinterpret_cast<decltype(&::fn)>(resolved);                                    \
    return found;                                                                           \
  }())

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

// Resolves every entry point; nullopt with *why_not set when one is missing.
std::optional<DriverApi> load_driver_api(std::string* why_not);

// "cuGreenCtxCreate: CUDA_ERROR_INVALID_VALUE"; throws std::runtime_error unless CUDA_SUCCESS.
void check_driver(const DriverApi& api, CUresult status, const char* call);

}  // namespace meshscope::runtime::cuda
