// The tracing seam: the executor calls an ActionTracer around every action of every rank; the
// tracer turns that into a Timeline. Host clock on the cpu backend (host_tracer.h), NVTX ranges +
// CUPTI records on GPUs (profiler/capture/cupti).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/mesh/mesh.h"
#include "sim/schedule/schedule.h"
#include "traces/timeline.h"

namespace meshscope::capture {

// What the executor knows about one action of a rank's program, fixed before the run starts (so
// the hot path formats nothing). One per action; the same object is passed for every step.
struct ActionInfo {
  schedule::Action action;
  int index = 0;      // position in the rank's program (schedule.ranks[rank])
  std::string label;  // "F s2 mb5", "SEND_F s1 mb0", "ALLREDUCE(dp) s1", "STEP s0";
                      // std::string so label.c_str() can go to NVTX
  traces::SpanKind span_kind = traces::SpanKind::kCompute;
  traces::Phase phase = traces::Phase::kNone;
  int peer = -1;      // p2p: the other global rank; -1 otherwise
  int64_t tag = -1;   // p2p: message tag; a send and its recv carry the same tag
  int64_t bytes = 0;  // payload actually moved by this rank (p2p, collectives); 0 otherwise
  double flops = 0;   // compute: floating-point operations on this rank; 0 otherwise
};

// A tensor-parallel collective issued inside a compute action (Megatron's all-reduces). Fixed
// before the run, like ActionInfo.
struct InnerInfo {
  std::string label;  // "tp all-reduce s1 fc2"
  mesh::GroupKind group = mesh::GroupKind::kTp;
  traces::SpanKind span_kind = traces::SpanKind::kCollective;
  int64_t bytes = 0;
  traces::CollectiveOp op = traces::CollectiveOp::kAllReduce;  // when span_kind is kCollective
};

// Facts at the end of an action.
struct ActionEnd {
  int64_t ready_ns = 0;           // recv/collective: runtime::TransferInfo::ready_ns; 0 otherwise
  int64_t activation_bytes = -1;  // activation memory the rank holds after it; -1: unchanged
  int64_t done_ns = 0;            // send: runtime::TransferInfo::done_ns; 0 otherwise
  int64_t called_ns = 0;          // runtime::TransferInfo::called_ns; 0: at the action's begin
};

struct RunInfo {
  const mesh::Mesh* mesh = nullptr;
  const schedule::Schedule* schedule = nullptr;
  int steps = 0;
  std::string backend;        // Backend::description()
  traces::RunDescriptor run;  // copied into Timeline::run
  // Copied into Timeline::metadata ("source", "schedule", "mesh", "model", "microbatches", ...).
  std::map<std::string, std::string> metadata;
  // programs[r][i] describes schedule->ranks[r][i]; inner[r] every InnerInfo rank r may report.
  // Both stay alive and unchanged until finish() returned.
  const std::vector<std::vector<ActionInfo>>* programs = nullptr;
  const std::vector<std::vector<InnerInfo>>* inner = nullptr;
};

// Contract:
// - begin_run() and finish() are called on the driver thread, before any rank thread starts and
//   after every rank thread has stopped.
// - Every other call comes from rank `rank`'s own host thread; calls for different ranks are
//   concurrent, calls for one rank are sequential. A tracer keeps per-rank state and takes no
//   lock on these paths; they must not allocate once begin_run() reserved room (steps x program
//   size), format strings or block: they sit inside the measured time.
// - Order per rank and step: step_begin, then for each action in program order action_begin,
//   (inner_begin, inner_end)*, action_end, then step_end. Ranks are synchronised between steps.
// - The calls are made after the work was issued, not when it ran: on a GPU backend the host
//   returns early and the tracer takes device times from its own records (CUPTI); on the cpu
//   backend work has run when the call returns, so host times are the real ones.
// - Abort: when a run is aborted, a rank stops mid-step (possibly between action_begin and
//   action_end); finish() is still called and returns what was recorded (open actions dropped).
class ActionTracer {
 public:
  virtual ~ActionTracer() = default;

  virtual void begin_run(const RunInfo& run) = 0;
  virtual void step_begin(int rank, int step) = 0;
  virtual void action_begin(int rank, int step, const ActionInfo& action) = 0;
  virtual void inner_begin(int rank, int step, const InnerInfo& inner) = 0;
  virtual void inner_end(int rank, int step, const InnerInfo& inner, int64_t ready_ns) = 0;
  virtual void action_end(int rank, int step, const ActionInfo& action, const ActionEnd& end) = 0;
  virtual void step_end(int rank, int step) = 0;
  // Builds the Timeline: a device per rank named "rank 3 · dp0 pp1 tp0" with lanes, spans, flows
  // from each send to its recv, the activation_bytes counter and one StepWindow per step.
  virtual traces::Timeline finish() = 0;
};

}  // namespace meshscope::capture
