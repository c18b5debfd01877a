// The communication-kernel name table and the user's --comm-kernel patterns.
#include "traces/import/comm_kernels.h"

#include <array>

namespace meshscope::traces::importer {
namespace {

struct Marker {
  std::string_view text;  // found anywhere in the kernel name
  CommLibrary library;
};

// Sources of the names:
//   vLLM csrc/custom_all_reduce.cuh: cross_device_reduce_1stage, cross_device_reduce_2stage.
//   PyTorch torch/csrc/distributed/c10d/symm_mem/CUDASymmetricMemoryOps.cu:
//     multimem_all_reduce_kernel, multimem_one_shot_all_reduce_kernel, multimem_all_gather_kernel,
//     one_shot_all_reduce_kernel, two_shot_all_reduce_kernel (seen in tests/fixtures/hta's B200
//     vLLM trace: 73 multimem_all_reduce_kernel).
//   DeepEP csrc/kernels/{intranode,internode,internode_ll}.cu, namespace deep_ep::; DeepSeek's
//     own build names it dpsk::ep:: (tests/fixtures/hta's H800 trace: internode::dispatch,
//     combine, notify_dispatch, cached_notify). get_dispatch_layout (namespace deep_ep::layout /
//     dpsk::ep::cuda) only counts tokens locally: compute, so it is not listed.
//   NVSHMEM: its device kernels are named nvshmem* / nvshmemi_*.
constexpr std::array kMarkers = {
    Marker{"cross_device_reduce_", CommLibrary::kVllmCustom},
    Marker{"multimem_all_reduce", CommLibrary::kSymmetricMemory},
    Marker{"multimem_one_shot_all_reduce", CommLibrary::kSymmetricMemory},
    Marker{"multimem_all_gather", CommLibrary::kSymmetricMemory},
    Marker{"one_shot_all_reduce", CommLibrary::kSymmetricMemory},
    Marker{"two_shot_all_reduce", CommLibrary::kSymmetricMemory},
    Marker{"deep_ep::intranode::", CommLibrary::kDeepEp},
    Marker{"deep_ep::internode::", CommLibrary::kDeepEp},
    Marker{"deep_ep::internode_ll::", CommLibrary::kDeepEp},
    Marker{"dpsk::ep::intranode::", CommLibrary::kDeepEp},
    Marker{"dpsk::ep::internode::", CommLibrary::kDeepEp},
    Marker{"dpsk::ep::internode_ll::", CommLibrary::kDeepEp},
};

}  // namespace

CommKernelMatch classify_comm_kernel(std::string_view name) {
  if (const CommOp op = nccl_kernel_op(name); op != CommOp::kNone) {
    return {CommLibrary::kNccl, op};
  }
  for (const Marker& m : kMarkers) {
    if (name.find(m.text) != std::string_view::npos) return {m.library, CommOp::kCollective};
  }
  // nvshmem at the start of the kernel's own name, after any "void " and namespaces.
  const size_t paren = name.find('(');
  const std::string_view head = name.substr(0, paren);
  const size_t last_colon = head.rfind(':');
  std::string_view fn = last_colon == std::string_view::npos ? head : head.substr(last_colon + 1);
  if (fn.starts_with("void ")) fn.remove_prefix(5);
  if (fn.starts_with("nvshmem")) return {CommLibrary::kNvshmem, CommOp::kCollective};
  return {};
}

CommKernelRules::CommKernelRules(const std::vector<std::string>& user_patterns) {
  for (const std::string& p : user_patterns) user_.emplace_back(p, std::regex::ECMAScript);
}

CommKernelMatch CommKernelRules::classify(std::string_view name) const {
  if (const CommKernelMatch m = classify_comm_kernel(name); m.library != CommLibrary::kNone) {
    return m;
  }
  for (const std::regex& r : user_) {
    if (std::regex_search(name.begin(), name.end(), r)) {
      return {CommLibrary::kUser, CommOp::kCollective};
    }
  }
  return {};
}

}  // namespace meshscope::traces::importer
