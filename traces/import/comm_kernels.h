// Which GPU kernels are communication: NCCL/RCCL kernels, and the libraries that move data
// without NCCL — vLLM's custom all-reduce, PyTorch symmetric-memory (multimem, one/two-shot)
// collectives, DeepEP's expert-parallel dispatch/combine, NVSHMEM — plus the user's patterns.
#pragma once

#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "traces/import/kineto_names.h"

namespace meshscope::traces::importer {

// The libraries recognised by name (the name table in comm_kernels.cpp cites each one's source).
enum class CommLibrary : uint8_t {
  kNone = 0,
  kNccl,             // ncclKernel_* / ncclDevKernel_* (RCCL keeps these names)
  kVllmCustom,       // vLLM custom all-reduce: vllm::cross_device_reduce_1stage / _2stage
  kSymmetricMemory,  // PyTorch symmetric memory: multimem_all_reduce_kernel, one/two-shot
  kDeepEp,   // DeepEP (deep_ep::, DeepSeek's dpsk::ep::) intranode/internode dispatch, combine
  kNvshmem,  // NVSHMEM device kernels (nvshmem*, nvshmemi_*)
  kUser,     // a --comm-kernel pattern
  kCount
};
inline constexpr std::array<std::string_view, static_cast<size_t>(CommLibrary::kCount)>
    kCommLibraryNames = {"none",   "nccl",    "vllm-custom", "symmetric-memory",
                         "deepep", "nvshmem", "user"};

struct CommKernelMatch {
  CommLibrary library = CommLibrary::kNone;
  CommOp op = CommOp::kNone;
};

// Patterns (ECMAScript regular expressions, searched anywhere in the kernel name) that make
// further kernels communication (kCollective). Throws std::regex_error on a bad pattern.
class CommKernelRules {
 public:
  CommKernelRules() = default;
  explicit CommKernelRules(const std::vector<std::string>& user_patterns);
  CommKernelMatch classify(std::string_view kernel_name) const;

 private:
  std::vector<std::regex> user_;
};

// The built-in table only (no user patterns).
CommKernelMatch classify_comm_kernel(std::string_view kernel_name);

}  // namespace meshscope::traces::importer
