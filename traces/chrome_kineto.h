// The Kineto (PyTorch profiler) names the Chrome export gives meshscope's spans, so that tools
// written for Kineto traces (HolisticTraceAnalysis, TensorBoard's profiler plugin, Perfetto's
// category filters) read a meshscope trace as they read a PyTorch one.
//
// Category of each span (Kineto's names; cat is informational in the Trace Event Format):
//   compute, send, recv, collective -> "kernel"       (device work; Kineto files NCCL's
//                                                      transfers and collectives as kernels too)
//   memcpy                          -> "gpu_memcpy"
//   memset                          -> "gpu_memset"
//   host, named cudaXxx             -> "cuda_runtime"  (CUDA runtime API calls)
//   host, named cuXxx               -> "cuda_driver"   (CUDA driver API calls)
//   host, any other name            -> "cpu_op"
//   annotation on a host lane       -> "user_annotation"
//   annotation on a device lane     -> "gpu_user_annotation"
//   idle                            -> "idle"          (no Kineto equivalent: Kineto records
//                                                      no gaps; kept so bubbles stay visible)
// Which args carry Kineto's meaning: "device" (the pid, as Kineto's GPU events have pid ==
// device) and "stream" on device work only; "correlation" on both ends of a host -> device
// launch flow: an imported launch keeps its source's correlation id; one without numbers it past
// them. The flow events themselves are numbered in the file's order (id = the flow's index), so
// the correlation equals the "ac2g" flow's id, as in Kineto, only where nothing was imported:
// join launches to kernels by args.correlation (as HTA does), not by the flow's id.
//
// How HolisticTraceAnalysis reads the result (hta/common/trace_parser.py, hta/utils/utils.py,
// hta/analyzers/breakdown_analysis.py in facebookresearch/HolisticTraceAnalysis): it takes the
// events with an integer args.stream as GPU work, so idle spans and annotations carry no stream
// and are never counted as kernels; it classifies GPU work by name: "ncclKernel" in the name ->
// communication, "Memcpy"/"Memset" -> memory, else computation. Kernels imported from Kineto or
// Nsight keep their real names and classify as they did; meshscope's own transfers and
// collectives are named for the schedule ("SEND_F s0 mb3", "ALLREDUCE(dp)"), so HTA's name rule
// counts them as computation, which is why the span kind also travels in args ("kind") and in
// the Timeline that meshscope itself analyses. The rank comes from the top-level
// "distributedInfo" (one_rank below); HTA reads one file per rank.
#pragma once

#include <optional>
#include <string_view>

#include "traces/timeline.h"

namespace meshscope::traces {

// Kineto category of a span of `kind` named `name` on a lane of `lane` kind (table above).
std::string_view kineto_category(SpanKind kind, LaneKind lane, std::string_view name);

// True for the spans that carry Kineto's "device" and "stream" args: device work.
constexpr bool has_kineto_stream(SpanKind kind) { return is_device_activity(kind); }

// Kineto's stream id for lane `index`: N for a lane named "stream N" (imported traces keep their
// CUDA stream ids), else the lane index.
int64_t kineto_stream(const Lane& lane, size_t index);

struct RankInfo {
  int64_t rank = 0;
  std::optional<int64_t> world_size;
};
// The rank the whole Timeline is the trace of, for Kineto's "distributedInfo": every device has
// the same rank r, and either metadata["rank"] says r (an imported per-rank trace) or every
// device has a mesh position (one rank of a meshscope run). nullopt for multi-rank timelines
// and for traces whose rank nobody knows. world_size from metadata["world_size"] when given.
std::optional<RankInfo> one_rank(const Timeline& t);

}  // namespace meshscope::traces
