// Reads the versions through each library's own call: cudaDriverGetVersion,
// cudaRuntimeGetVersion, cublasGetProperty, and dlsym'd cuptiGetVersion / ncclGetVersion.
#include "kernels/cuda/library_versions.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdint>

namespace meshscope::kernels::cuda {
namespace {

// CUDA encodes versions as 1000 * major + 10 * minor.
std::string cuda_version(int v) {
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

// Calls `symbol` (int fn(T*)) in `library`, loaded privately; false with *why set on failure.
template <typename T>
bool call_versioned(const char* library, const char* symbol, T* out, std::string* why) {
  void* handle = dlopen(library, RTLD_LAZY | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* e = dlerror();
    *why = e != nullptr ? e : "dlopen failed";
    return false;
  }
  auto fn = reinterpret_cast<int (*)(T*)>(dlsym(handle, symbol));
  const bool ok = fn != nullptr && fn(out) == 0;
  if (!ok) *why = std::string(symbol) + (fn == nullptr ? " not found" : " failed");
  // Left loaded: unloading CUPTI or NCCL while the process runs is not supported by either.
  return ok;
}

}  // namespace

std::vector<LibraryVersion> library_versions() {
  std::vector<LibraryVersion> out;
  int v = 0;
  cudaError_t status = cudaDriverGetVersion(&v);
  if (status == cudaSuccess && v > 0) {
    out.push_back(
        {"driver", cuda_version(v), "cudaDriverGetVersion (the CUDA version it supports)"});
  } else {
    out.push_back({"driver", "",
                   status == cudaSuccess ? "no driver (cudaDriverGetVersion gave 0)"
                                         : cudaGetErrorName(status)});
  }
  (void)cudaGetLastError();
  v = 0;
  status = cudaRuntimeGetVersion(&v);
  out.push_back({"runtime", status == cudaSuccess ? cuda_version(v) : "",
                 status == cudaSuccess ? "cudaRuntimeGetVersion (linked statically)"
                                       : cudaGetErrorName(status)});
  int major = 0, minor = 0, patch = 0;
  if (cublasGetProperty(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(MINOR_VERSION, &minor) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(PATCH_LEVEL, &patch) == CUBLAS_STATUS_SUCCESS) {
    out.push_back(
        {"cublas",
         std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch),
         "cublasGetProperty"});
  } else {
    out.push_back({"cublas", "", "cublasGetProperty failed"});
  }
  std::string why;
  uint32_t cupti = 0;
  if (call_versioned("libcupti.so.13", "cuptiGetVersion", &cupti, &why)) {
    out.push_back({"cupti", std::to_string(cupti), "cuptiGetVersion: CUPTI API version"});
  } else {
    out.push_back({"cupti", "", why});
  }
  int nccl = 0;
  if (call_versioned("libnccl.so.2", "ncclGetVersion", &nccl, &why)) {
    // NCCL_VERSION_CODE: 10000 * major + 100 * minor + patch since 2.9.
    out.push_back({"nccl",
                   std::to_string(nccl / 10000) + "." + std::to_string(nccl % 10000 / 100) + "." +
                       std::to_string(nccl % 100),
                   "ncclGetVersion"});
  } else {
    out.push_back({"nccl", "", why});
  }
  return out;
}

}  // namespace meshscope::kernels::cuda
