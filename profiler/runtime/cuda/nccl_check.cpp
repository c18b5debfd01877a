// Formats failed NCCL calls as CudaError.
#include "profiler/runtime/cuda/nccl_check.h"

#include <string>

#include "kernels/cuda/check.h"

namespace meshscope::runtime::cuda {

void check_nccl(ncclResult_t status, const char* call, const char* file, int line) {
  if (status == ncclSuccess) return;
  std::string error = ncclGetErrorString(status);
  if (const char* last = ncclGetLastError(nullptr); last != nullptr && *last != '\0') {
    error += ": ";
    error += last;
  }
  throw kernels::cuda::CudaError(kernels::cuda::format_call_error(file, line, call, error),
                                 static_cast<int>(status));
}

}  // namespace meshscope::runtime::cuda
