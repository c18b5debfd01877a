// What profiler/runtime/cuda provides to the backend factory (backend_factory.cpp), which calls it
// only in builds where the target meshscope_runtime_cuda exists (MESHSCOPE_HAS_CUDA_BACKEND).
#pragma once

#include <memory>
#include <string>

#include "profiler/runtime/backend.h"

namespace meshscope::runtime::cuda {

// Usable GPUs (0 when there is no driver or no device; *why_none then says why). Never throws.
int usable_gpu_count(std::string* why_none);

// One rank per GPU, NCCL communicators per process group. Throws std::runtime_error on failure.
std::unique_ptr<Backend> make_cuda_backend(const BackendOptions& options);
// options.mesh.size() virtual devices on GPU options.gpu. Throws std::runtime_error on failure.
std::unique_ptr<Backend> make_cuda_virtual_backend(const BackendOptions& options);

}  // namespace meshscope::runtime::cuda
