// The per-device GPU time breakdown HolisticTraceAnalysis (HTA) popularised, for any Timeline.
//
// Definitions, after HTA's published ones (github.com/facebookresearch/HolisticTraceAnalysis:
// docs "Temporal Breakdown", "Idle Time Breakdown", "Communication Computation Overlap";
// hta/analyzers/breakdown_analysis.py get_temporal_breakdown / _analyze_idle_time_for_stream,
// hta/analyzers/communication_analysis.py):
//   span       From the device's first GPU activity to its last (GPU activity = the
//              device-activity kinds of timeline.h: kernels (compute, send, recv, collective),
//              memcpy, memset). Host, annotation and derived idle spans are not GPU activity.
//   busy       Union of GPU activity.            idle = span − busy.
//   compute    Union of kernels that are neither communication nor memory (kCompute). On a
//              meshscope cpu run, a compute action performs its own tp all-reduce inside its
//              span; that collective, from the rank's arrival at it, is taken out of compute and
//              busy as in analysis.h: the wait for the group is idle ("other"), the transfer
//              communication. HTA itself, reading such a file, counts the whole span as compute.
//   communication  Union of NCCL kernels (kCollective, kSend, kRecv).
//   memory     Union of memcpy and memset.
//   idle split Each gap of the busy union is attributed to the activity that ends it (the spans
//              starting at the gap's end):
//                host wait   every one of them was launched by the host (a flow from a kHost
//                            span, e.g. cudaLaunchKernel) strictly after the gap began: the
//                            CPU was not enqueuing work fast enough;
//                kernel wait otherwise, if the gap is shorter than consecutive_kernel_delay_ns
//                            (30 µs: HTA 0.5's default consecutive_kernel_delay=30 is documented
//                            as ns but compared with gaps in µs, hta/analyzers/
//                            breakdown_analysis.py _analyze_idle_time_for_stream): the overhead
//                            of launching back-to-back kernels;
//                other       the rest (e.g. waiting on an event from another stream or peer).
//              host_wait + kernel_wait + other = idle exactly. HTA classifies gaps per CUDA
//              stream; here the gaps are those of the whole device's busy union so the three
//              parts add up to the device's idle time, as in HTA's temporal breakdown
//              (`analyze --window hta` gives HTA's per-stream split: analysis_hta_window.h).
//   overlap    |communication ∩ compute| / |communication|: the share of communication time
//              during which compute also runs (HTA's comp_comm_overlap); 0 without communication.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace meshscope::traces {

struct Timeline;

struct HtaOptions {
  int64_t consecutive_kernel_delay_ns = 30'000;  // HTA 0.5's effective threshold (see above)
};

struct HtaDeviceBreakdown {
  uint16_t device = 0;  // index into Timeline::devices
  int rank = 0;
  std::string name;
  int64_t begin_ns = 0;  // first GPU activity
  int64_t end_ns = 0;    // last GPU activity ends
  int64_t span_ns = 0;
  int64_t busy_ns = 0;
  int64_t idle_ns = 0;
  int64_t compute_ns = 0;
  int64_t communication_ns = 0;
  int64_t memory_ns = 0;
  int64_t host_wait_ns = 0;
  int64_t kernel_wait_ns = 0;
  int64_t other_idle_ns = 0;
  int64_t comm_compute_overlap_ns = 0;
  double comm_compute_overlap = 0;  // comm_compute_overlap_ns / communication_ns
};

// One entry per device that has GPU activity, in device order.
std::vector<HtaDeviceBreakdown> hta_breakdown(const Timeline& t, const HtaOptions& options = {});

}  // namespace meshscope::traces
