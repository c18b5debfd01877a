// Builds the Timeline of a GPU run from CUPTI records plus what the tracer knows: which CUPTI
// stream belongs to which rank, each rank's host thread, each action's host-clock interval, and
// the programs (ActionInfo) the external ids point into.
//   - GPU ops land on their rank's lane for their (device, context, stream) ("compute", "comm",
//     or "stream N"),
//     with stage, microbatch and phase of their action (labeler.h says how an op finds it).
//   - Kernels and copies of communication actions become send/recv/collective spans; NCCL
//     kernels outside any action become collectives; other kernels compute, copies memcpy.
//   - Each action also gets an annotation span over its GPU work and one on the host lane.
//   - Flows go from each send action's last GPU span to its recv's first (host annotations where
//     an action issued no GPU work), matched by (step, source, destination, tag) in order.
//   - CUPTI times are mapped to the host clock through ClockSync.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "profiler/capture/action_tracer.h"
#include "profiler/capture/cupti/clock_sync.h"
#include "profiler/capture/cupti/records.h"
#include "traces/timeline.h"

namespace meshscope::capture::cupti {

struct StreamLane {
  uint32_t device = 0;   // CUDA device ordinal as CUPTI reports it
  uint32_t context = 0;  // CUPTI context id (stream ids repeat across contexts)
  uint32_t stream = 0;   // CUPTI stream id
  std::string lane;      // "compute", "comm"
  traces::LaneKind kind = traces::LaneKind::kCompute;
};

struct RankLayout {
  std::string name;  // "rank 3 · dp0 pp1 tp0"
  traces::MeshCoord coord;
  uint32_t thread = 0;  // system thread id (gettid) of the rank's host thread; 0: unknown
  std::vector<StreamLane> streams;
};

// One action (or inner collective) as the rank's host thread issued it, on the host clock.
struct HostAction {
  int step = 0;
  int index = 0;   // in the rank's program
  int inner = -1;  // index into RunInfo::inner[rank]; -1 for the action itself
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  int64_t activation_bytes = -1;  // ActionEnd::activation_bytes
};

struct BuildInput {
  const RecordSet* records = nullptr;
  const ClockSync* clock = nullptr;
  std::vector<RankLayout> ranks;
  const std::vector<std::vector<ActionInfo>>* programs = nullptr;  // RunInfo::programs
  const std::vector<std::vector<InnerInfo>>* inner = nullptr;      // RunInfo::inner (may be null)
  std::vector<std::vector<HostAction>> host;                       // per rank, in issue order
  std::map<std::string, std::string> metadata;
  traces::RunDescriptor run;  // RunInfo::run
  std::string nvtx_domain = "meshscope";
};

// How the records were used: every GPU op is counted in exactly one of the first four.
struct BuildReport {
  uint64_t by_external_id = 0;  // labelled through the external correlation id
  uint64_t by_nvtx = 0;         // labelled through the enclosing NVTX range
  uint64_t unlabelled = 0;      // on a known rank's stream but tied to no action
  uint64_t unattributed = 0;    // neither: put on a "GPU n (unattributed)" device
  uint64_t dropped_records = 0;
  uint64_t unmatched_markers = 0;
  uint64_t flows = 0;
  uint64_t untimed_records = 0;     // RecordSet::untimed_records
  uint64_t incomplete_buffers = 0;  // RecordSet::incomplete_buffers
};

traces::Timeline build_timeline(const BuildInput& in, BuildReport* report = nullptr);

}  // namespace meshscope::capture::cupti
