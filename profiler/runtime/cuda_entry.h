// What profiler/runtime/cuda provides to the backend factory (backend_factory.cpp). The cuda code
// lives in the GPU module (libmeshscope-gpu.so, see plugin.h), which exports these functions as one
// table; the factory loads it only when a backend of the module (backend_table.h) is asked for or
// the GPUs are probed.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "profiler/runtime/backend.h"
#include "profiler/runtime/plugin.h"

namespace meshscope::runtime::cuda {

// Usable GPUs (0 when there is no driver or no device; *why_none then says why). Never throws.
int usable_gpu_count(std::string* why_none);

// The backend `kind`, one of MESHSCOPE_GPU_MODULE_BACKENDS, through its row's maker. Throws
// std::runtime_error on failure (and for a kind the module does not make).
std::unique_ptr<Backend> make_module_backend(BackendKind kind, const BackendOptions& options);

// The table the GPU module returns from `extern "C" meshscope_cuda_backends()`.
struct CudaBackendEntry {
  int abi = kPluginAbi;
  size_t options_size = sizeof(BackendOptions);  // a module of another build is refused
  int (*usable_gpu_count)(std::string* why_none) = nullptr;
  std::unique_ptr<Backend> (*make_backend)(BackendKind, const BackendOptions&) = nullptr;
};
inline constexpr const char* kCudaBackendSymbol = "meshscope_cuda_backends";

}  // namespace meshscope::runtime::cuda
