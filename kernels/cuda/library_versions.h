// The versions of the CUDA pieces a GPU run depends on, as the loaded libraries report them
// (not as the build saw them): driver, runtime, cuBLAS, CUPTI, NCCL. For gpu-check.sh's first
// rows, so a driver/runtime mismatch shows before any check fails on it.
#pragma once

#include <string>
#include <vector>

namespace meshscope::kernels::cuda {

struct LibraryVersion {
  std::string library;  // "driver", "runtime", "cublas", "cupti", "nccl"
  std::string version;  // "13.0", "13.0.0", ...; "" when it could not be read
  std::string detail;   // where it came from, or why it could not be read
};

// Never throws. CUPTI and NCCL are opened with dlopen (libcupti.so.13, libnccl.so.2), so this
// works in a binary that links neither.
std::vector<LibraryVersion> library_versions();

}  // namespace meshscope::kernels::cuda
