// What Kineto's (PyTorch profiler's) category and kernel names mean: category -> where the event
// lives and what kind of span it is; NCCL kernel and op names -> communication kinds; PyTorch
// dtype names -> element sizes.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

#include "traces/timeline.h"

namespace meshscope::traces::importer {

enum class KinetoCategory : uint8_t {
  kUnknown = 0,
  kKernel,             // "kernel" (older traces: "Kernel")
  kMemcpy,             // "gpu_memcpy" ("Memcpy")
  kMemset,             // "gpu_memset" ("Memset")
  kGpuUserAnnotation,  // "gpu_user_annotation": a record_function range projected on a stream
  kCudaSync,           // "cuda_sync": a stream or event wait shown on the GPU
  kRuntime,            // "cuda_runtime" ("Runtime")
  kDriver,             // "cuda_driver" ("Driver")
  kCpuOp,              // "cpu_op" ("Operator")
  kUserAnnotation,     // "user_annotation": record_function ranges, ProfilerStep#N
  kPythonFunction,     // "python_function" ("python")
  kHostOther,          // "overhead", "cpu_instant_event", "external_correlation", ...
  kTrace,              // "Trace": the profiler's own window marker, not work
  kCount
};

// Where an event's span goes.
enum class Placement : uint8_t { kGpu, kHost, kSkip };

struct CategoryInfo {
  KinetoCategory category = KinetoCategory::kUnknown;
  Placement placement = Placement::kHost;
  SpanKind kind = SpanKind::kHost;  // before the NCCL refinement of kernels
};

// Case-insensitive; unknown categories are host work (kHost), as in a generic Chrome trace.
CategoryInfo classify_kineto_category(std::string_view cat);

// The communication an NCCL kernel ("ncclKernel_AllReduce_RING_LL_Sum_float(...)",
// "ncclDevKernel_SendRecv(...)") or an op ("nccl:all_reduce", "Collective name": "recv") does.
enum class CommOp : uint8_t { kNone = 0, kCollective, kSend, kRecv, kSendRecv, kCount };
CommOp nccl_kernel_op(std::string_view kernel_name);
// From a PyTorch op name ("nccl:send 0->1", "nccl:all_reduce") or a "Collective name" arg
// ("send", "recv", "allreduce", "all_to_all", ...).
CommOp comm_op_from_op_name(std::string_view op_name);
CommOp comm_op_from_collective_name(std::string_view collective_name);
SpanKind span_kind_of(CommOp op);  // kSendRecv -> kSend (direction unknown)
// The collective a "Collective name" arg ("allreduce", "_allgather_base", "reduce_scatter_tensor",
// "all_to_allv") or an NCCL kernel ("ncclDevKernel_AllGather_RING_LL(...)") performs, of those
// the cost model prices; nullopt for any other (broadcast, reduce, barrier, send/recv) and for a
// coalesced call, whose element counts are not one buffer's.
std::optional<CollectiveOp> collective_op_named(std::string_view name);
// {first, stride} of a "Process Group Ranks" list ("[0, 2, 4, 6]") of `count` global ranks evenly
// spaced; nullopt for any other list (unevenly spaced, another count, cut short with "..." as
// PyTorch writes long ones, not a list).
std::optional<std::pair<int32_t, int32_t>> evenly_spaced_ranks(std::string_view list,
                                                               int64_t count);

// Bytes per element of a PyTorch dtype name ("Float", "BFloat16", "Long", ...); nullopt when
// unknown.
std::optional<int> dtype_bytes(std::string_view dtype);

// N from "ProfilerStep#N"; nullopt for other names.
std::optional<int64_t> profiler_step_number(std::string_view name);

// A Python frame PyTorch's profiler records with `with_stack=True` (category python_function):
// "torch/nn/modules/module.py(1751): _call_impl", "<built-in method add of ...>", "nn.Module:
// Linear_0". Frames wrap the ops a step runs, the actions' ranges among them, so an op inside a
// frame is still outermost among ops; torch's op names never take these forms.
bool is_python_frame(std::string_view name);

// A name that is a ProfilerStep# marker whose suffix is no integer ("ProfilerStep#five"): no step
// window can come of it, and the importers say so (ImportWarning::kUnnumberedStep).
bool is_unnumbered_profiler_step(std::string_view name);

}  // namespace meshscope::traces::importer
