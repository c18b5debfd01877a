// Error checks for CUDA runtime and cuBLAS calls that name the file, line and the call's text
// (as nccl-tests' CUDACHECK does). Library policy: throw; destructors only warn.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace meshscope::kernels::cuda {

// A failed CUDA, cuBLAS, NCCL or CUPTI call; what() reads "file:line: call: error (description)".
class CudaError : public std::runtime_error {
 public:
  CudaError(std::string message, int code) : std::runtime_error(std::move(message)), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

std::string format_call_error(const char* file, int line, const char* call,
                              const std::string& error);

void check_cuda(cudaError_t status, const char* call, const char* file, int line);
void check_cublas(cublasStatus_t status, const char* call, const char* file, int line);
// For destructors: prints the failure to stderr instead of throwing.
void warn_cuda(cudaError_t status, const char* call, const char* file, int line) noexcept;

}  // namespace meshscope::kernels::cuda

#define MESHSCOPE_CUDA_CHECK(call) \
  ::meshscope::kernels::cuda::check_cuda((call), #call, __FILE__, __LINE__)
#define MESHSCOPE_CUBLAS_CHECK(call) \
  ::meshscope::kernels::cuda::check_cublas((call), #call, __FILE__, __LINE__)
#define MESHSCOPE_CUDA_WARN(call) \
  ::meshscope::kernels::cuda::warn_cuda((call), #call, __FILE__, __LINE__)
