// Formats failed CUDA and cuBLAS calls into exceptions that say where and what.
#include "kernels/cuda/check.h"

#include <cstdio>

namespace meshscope::kernels::cuda {

std::string format_call_error(const char* file, int line, const char* call,
                              const std::string& error) {
  return std::string(file) + ":" + std::to_string(line) + ": " + call + ": " + error;
}

void check_cuda(cudaError_t status, const char* call, const char* file, int line) {
  if (status == cudaSuccess) return;
  (void)cudaGetLastError();  // clear a sticky-free error so the next call starts clean
  throw CudaError(format_call_error(file, line, call,
                                    std::string(cudaGetErrorName(status)) + " (" +
                                        cudaGetErrorString(status) + ")"),
                  static_cast<int>(status));
}

void check_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw CudaError(format_call_error(file, line, call,
                                    std::string(cublasGetStatusName(status)) + " (" +
                                        cublasGetStatusString(status) + ")"),
                  static_cast<int>(status));
}

void warn_cuda(cudaError_t status, const char* call, const char* file, int line) noexcept {
  if (status == cudaSuccess) return;
  std::fprintf(stderr, "meshscope: warning: %s:%d: %s: %s\n", file, line, call,
               cudaGetErrorName(status));
}

}  // namespace meshscope::kernels::cuda
