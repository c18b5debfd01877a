// Name tables for Kineto categories, NCCL kernels and ops, and PyTorch dtypes.
#include "traces/import/kineto_names.h"

#include <charconv>
#include <climits>
#include <string>
#include <utility>

namespace meshscope::traces::importer {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const char x = (a[i] >= 'A' && a[i] <= 'Z') ? static_cast<char>(a[i] + 32) : a[i];
    if (x != b[i]) return false;
  }
  return true;
}

struct CategoryName {
  std::string_view name;  // lower case
  CategoryInfo info;
};

constexpr CategoryInfo gpu(KinetoCategory c, SpanKind k) { return {c, Placement::kGpu, k}; }
constexpr CategoryInfo host(KinetoCategory c, SpanKind k) { return {c, Placement::kHost, k}; }

constexpr std::array kCategories = {
    CategoryName{"kernel", gpu(KinetoCategory::kKernel, SpanKind::kCompute)},
    CategoryName{"gpu_memcpy", gpu(KinetoCategory::kMemcpy, SpanKind::kMemcpy)},
    CategoryName{"memcpy", gpu(KinetoCategory::kMemcpy, SpanKind::kMemcpy)},
    CategoryName{"gpu_memset", gpu(KinetoCategory::kMemset, SpanKind::kMemset)},
    CategoryName{"memset", gpu(KinetoCategory::kMemset, SpanKind::kMemset)},
    CategoryName{"gpu_user_annotation",
                 gpu(KinetoCategory::kGpuUserAnnotation, SpanKind::kAnnotation)},
    CategoryName{"cuda_sync", gpu(KinetoCategory::kCudaSync, SpanKind::kAnnotation)},
    CategoryName{"cuda_runtime", host(KinetoCategory::kRuntime, SpanKind::kHost)},
    CategoryName{"runtime", host(KinetoCategory::kRuntime, SpanKind::kHost)},
    CategoryName{"cuda_driver", host(KinetoCategory::kDriver, SpanKind::kHost)},
    CategoryName{"driver", host(KinetoCategory::kDriver, SpanKind::kHost)},
    CategoryName{"cpu_op", host(KinetoCategory::kCpuOp, SpanKind::kHost)},
    CategoryName{"operator", host(KinetoCategory::kCpuOp, SpanKind::kHost)},
    CategoryName{"user_annotation", host(KinetoCategory::kUserAnnotation, SpanKind::kAnnotation)},
    CategoryName{"python_function", host(KinetoCategory::kPythonFunction, SpanKind::kHost)},
    CategoryName{"python", host(KinetoCategory::kPythonFunction, SpanKind::kHost)},
    CategoryName{"overhead", host(KinetoCategory::kHostOther, SpanKind::kHost)},
    CategoryName{"cpu_instant_event", host(KinetoCategory::kHostOther, SpanKind::kHost)},
    CategoryName{"external_correlation", host(KinetoCategory::kHostOther, SpanKind::kHost)},
    CategoryName{"trace", {KinetoCategory::kTrace, Placement::kSkip, SpanKind::kAnnotation}},
};

struct CommName {
  std::string_view name;
  CommOp op;
};

// Matched as prefixes of what follows "ncclKernel_" / "ncclDevKernel_"; longer names first.
constexpr std::array kKernelOps = {
    CommName{"SendRecv", CommOp::kSendRecv},
    CommName{"Send", CommOp::kSend},
    CommName{"Recv", CommOp::kRecv},
    CommName{"AllReduce", CommOp::kCollective},
    CommName{"AllGather", CommOp::kCollective},
    CommName{"ReduceScatter", CommOp::kCollective},
    CommName{"Broadcast", CommOp::kCollective},
    CommName{"Reduce", CommOp::kCollective},
    CommName{"AllToAll", CommOp::kCollective},
};

}  // namespace

CategoryInfo classify_kineto_category(std::string_view cat) {
  for (const CategoryName& c : kCategories) {
    if (iequals(cat, c.name)) return c.info;
  }
  return {};
}

CommOp nccl_kernel_op(std::string_view name) {
  std::string_view rest;
  if (name.starts_with("ncclDevKernel")) {
    rest = name.substr(13);
  } else if (name.starts_with("ncclKernel")) {
    rest = name.substr(10);
  } else {
    return CommOp::kNone;
  }
  if (!rest.empty() && rest.front() == '_') rest.remove_prefix(1);
  for (const CommName& k : kKernelOps) {
    if (rest.starts_with(k.name)) return k.op;
  }
  return CommOp::kCollective;  // an NCCL kernel of a kind we do not name: still communication
}

CommOp comm_op_from_collective_name(std::string_view n) {
  while (!n.empty() && n.front() == '_') n.remove_prefix(1);  // "_allgather_base", "_send"
  if (n.empty()) return CommOp::kNone;
  if (iequals(n, "send") || iequals(n, "isend")) return CommOp::kSend;
  if (iequals(n, "recv") || iequals(n, "irecv") || iequals(n, "recv_any_source")) {
    return CommOp::kRecv;
  }
  return CommOp::kCollective;
}

std::optional<CollectiveOp> collective_op_named(std::string_view name) {
  if (name.starts_with("ncclDevKernel")) {
    name.remove_prefix(13);
  } else if (name.starts_with("ncclKernel")) {
    name.remove_prefix(10);
  }
  // Lower case without underscores, up to the kernel's arguments: "allgatherringll".
  std::string key;
  for (const char c : name.substr(0, name.find('('))) {
    if (c == '_') continue;
    key += (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c;
  }
  if (key.find("coalesced") != std::string::npos) return std::nullopt;
  static constexpr std::array<std::pair<std::string_view, CollectiveOp>, 4> kPrefixes = {{
      {"allreduce", CollectiveOp::kAllReduce},
      {"allgather", CollectiveOp::kAllGather},
      {"reducescatter", CollectiveOp::kReduceScatter},
      {"alltoall", CollectiveOp::kAllToAll},
  }};
  for (const auto& [prefix, op] : kPrefixes) {
    if (key.starts_with(prefix)) return op;
  }
  return std::nullopt;
}

std::optional<std::pair<int32_t, int32_t>> evenly_spaced_ranks(std::string_view list,
                                                               int64_t count) {
  if (list.size() < 2 || list.front() != '[' || list.back() != ']' || count < 2)
    return std::nullopt;
  list = list.substr(1, list.size() - 2);
  int64_t first = -1, stride = 0, previous = -1, seen = 0;
  while (!list.empty()) {
    while (!list.empty() && list.front() == ' ') list.remove_prefix(1);
    int64_t r = -1;
    const auto [end, ec] = std::from_chars(list.data(), list.data() + list.size(), r);
    if (ec != std::errc() || r < 0 || r > INT32_MAX) return std::nullopt;  // "...", a name
    list.remove_prefix(static_cast<size_t>(end - list.data()));
    if (seen == 0) {
      first = r;
    } else if (seen == 1) {
      stride = r - previous;
      if (stride <= 0) return std::nullopt;
    } else if (r - previous != stride) {
      return std::nullopt;
    }
    previous = r;
    ++seen;
    while (!list.empty() && list.front() == ' ') list.remove_prefix(1);
    if (!list.empty() && list.front() != ',') return std::nullopt;
    if (!list.empty()) list.remove_prefix(1);
  }
  if (seen != count) return std::nullopt;
  return std::pair{static_cast<int32_t>(first), static_cast<int32_t>(stride)};
}

CommOp comm_op_from_op_name(std::string_view op_name) {
  if (!op_name.starts_with("nccl:")) return CommOp::kNone;
  std::string_view n = op_name.substr(5);
  // "send 0->1" (record_function), "send, seq = 3" (NVTX ranges of emit_nvtx)
  const size_t end = n.find_first_of(" ,(");
  if (end != std::string_view::npos) n = n.substr(0, end);
  return comm_op_from_collective_name(n);
}

SpanKind span_kind_of(CommOp op) {
  switch (op) {
    case CommOp::kRecv:
      return SpanKind::kRecv;
    case CommOp::kSend:
    case CommOp::kSendRecv:
      return SpanKind::kSend;
    case CommOp::kCollective:
      return SpanKind::kCollective;
    default:
      return SpanKind::kCompute;
  }
}

std::optional<int> dtype_bytes(std::string_view dtype) {
  static constexpr std::array<std::pair<std::string_view, int>, 24> kSizes = {{
      {"Float", 4},
      {"Double", 8},
      {"Half", 2},
      {"BFloat16", 2},
      {"Int", 4},
      {"Long", 8},
      {"Short", 2},
      {"Char", 1},
      {"Byte", 1},
      {"Bool", 1},
      {"ComplexHalf", 4},
      {"ComplexFloat", 8},
      {"ComplexDouble", 16},
      {"Float8_e4m3fn", 1},
      {"Float8_e5m2", 1},
      {"Float8_e4m3fnuz", 1},
      {"Float8_e5m2fnuz", 1},
      {"UInt16", 2},
      {"UInt32", 4},
      {"UInt64", 8},
      {"QInt8", 1},
      {"QUInt8", 1},
      {"QInt32", 4},
      {"Float8_e8m0fnu", 1},
  }};
  for (const auto& [n, size] : kSizes) {
    if (n == dtype) return size;
  }
  return std::nullopt;
}

namespace {
constexpr std::string_view kPrefix = "ProfilerStep#";
}  // namespace

std::optional<int64_t> profiler_step_number(std::string_view name) {
  if (!name.starts_with(kPrefix)) return std::nullopt;
  int64_t n = 0;
  const char* b = name.data() + kPrefix.size();
  const char* e = name.data() + name.size();
  const auto r = std::from_chars(b, e, n);
  if (r.ec != std::errc() || r.ptr != e) return std::nullopt;
  return n;
}

bool is_unnumbered_profiler_step(std::string_view name) {
  return name.starts_with(kPrefix) && !profiler_step_number(name);
}

bool is_python_frame(std::string_view name) {
  if (name.starts_with("<built-in ") || name.starts_with("nn.Module: ")) return true;
  // "FILE(LINE): FUNCTION"
  for (size_t open = name.find('('); open != std::string_view::npos;
       open = name.find('(', open + 1)) {
    size_t i = open + 1;
    while (i < name.size() && name[i] >= '0' && name[i] <= '9') ++i;
    if (i > open + 1 && name.substr(i).starts_with("): ")) return true;
  }
  return false;
}

}  // namespace meshscope::traces::importer
