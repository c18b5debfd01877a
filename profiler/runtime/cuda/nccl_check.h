// NCCL error checks naming file, line, the call's text and NCCL's last error message.
#pragma once

#include <nccl.h>

namespace meshscope::runtime::cuda {

void check_nccl(ncclResult_t status, const char* call, const char* file, int line);

}  // namespace meshscope::runtime::cuda

#define MESHSCOPE_NCCL_CHECK(call) \
  ::meshscope::runtime::cuda::check_nccl((call), #call, __FILE__, __LINE__)
