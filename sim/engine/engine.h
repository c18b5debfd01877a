// The discrete-event simulator: runs a Schedule in virtual time on a cost model and returns the
// step time, per-rank statistics and, on request, a Timeline shaped like the executor's.
//
// Semantics (the executor's, with GPU streams):
// - Each rank has a program cursor, one compute stream, one send stream and one collective stream.
//   The cursor runs compute actions (F, B, I, W, STEP) on the compute stream one at a time and
//   waits for each to finish. SEND is issued without waiting. The cursor passes a RECV once the
//   peer has issued the matching SEND, and a collective once every member of its group has
//   reached it, and with tp ranks whose programs differ each compute waits for its tp group:
//   the rendezvous of schedule/validator.h (and of the executor). So a schedule the validator
//   accepts runs here, and one it finds deadlocking fails here too (as a deadlock, or as the
//   unmatched transfer or collective behind it); the data then moves on the communication
//   streams while the cursor goes on.
// - A compute action starts once every RECV issued before it has its data and every all-gather
//   and all-to-all issued before it on the same stage has completed, or released it
//   (CollectiveOverlap::release_ns; they bring its inputs: ZeRO-3 parameters, expert tokens);
//   STEP also waits for the stage's all-reduces and
//   reduce-scatters (its gradients). Gradient reductions otherwise overlap later compute, unless
//   EngineInput::blocking_reductions.
// - SEND is eager: its transfer starts when the send stream is free (sends of a rank run in
//   program order); it takes latency + bytes / rate, where the rate is the link bandwidth shared
//   by the transfers in flight on the sender's egress and the receiver's ingress port of that tier.
//   A RECV completes when its transfer has arrived. With EngineInput::blocking_sends a compute
//   also waits for the SENDs issued before it to complete.
// - A collective starts when every member of the group has issued it and finished its earlier
//   collectives; it then runs for the time the cost model gives and completes on all members at
//   once. A gradient reduction may have begun during the backward before it, and a parameter
//   gather may let the compute that uses it begin before it ends (CollectiveOverlap). While it
//   runs, a member's compute runs slower by the share of the processors it holds
//   (EngineInput::collective_sm_share); so, likewise, while a transfer runs or a receive posted
//   ahead waits for its data (EngineInput::p2p_sm_share_by_tier, recvs_posted_ahead).
// A schedule that cannot finish is reported by SimulationError naming the stuck ranks and actions.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/schedule/schedule.h"
#include "traces/timeline.h"

namespace meshscope::engine {

struct SimulationError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What one stage costs per microbatch (and per step, for STEP) on one rank.
struct StageTiming {
  int64_t forward_ns = 0;
  int64_t backward_ns = 0;  // B = I + W
  int64_t input_grad_ns = 0;
  int64_t weight_grad_ns = 0;
  int64_t optimizer_ns = 0;
  double forward_flops = 0;
  double input_grad_flops = 0;
  double weight_grad_flops = 0;
  int64_t activation_bytes = 0;   // held from F to B (or to I and W, see below)
  int64_t weight_grad_bytes = 0;  // of those, released by W rather than I
  int64_t p2p_bytes = 0;          // transfer size when an action gives none
};

// How a collective overlaps the compute beside it, layer by layer, while it holds its stream for
// all of its collective_ns (so that collectives queued behind it wait for all of it):
// - lead_ns > 0: its members' streams may begin it before their cursors reach it, as a gradient
//   reduction a framework issues bucket by bucket while the backward just before it runs
//   (PyTorch DDP's and ZeRO's gradient buckets, Megatron's overlap_grad_reduce): from `lead_ns`
//   before its member's cursor reached it at the earliest, and never before that member's
//   previous collective ended. It ends no sooner than `tail_ns` after its last member reached it
//   (the last bucket, made as the backward ends). What ran before that reach ran beside the
//   compute: `charge_share` of it is added to each member's next compute action (the SMs its
//   thread blocks held slowed the compute beside it, as collective_sm_share charges a collective
//   running beside compute; the engine adds what has already run to what comes next, so that a
//   reduction after every microbatch's backward costs the next forward, and the step's last the
//   optimizer step). A stream still busy with earlier reductions therefore hides nothing: each
//   reduction then takes its full time.
// - release_ns > 0 (less than its collective_ns): the compute waiting for it (a gather brings its
//   inputs) may start `release_ns` after it began, as a forward uses a parameter gather's first
//   layers while the rest arrive (ZeRO-3's and FSDP's prefetched gathers): what the part that
//   hides behind that compute leaves of it, with the SMs it holds meanwhile. Its stream stays busy
//   until it ends.
// - hide_layers > 0 (in place of release_ns): the release is computed from the compute that uses
//   the gather, the first compute of its stage after it in its rank's program, layer by layer
//   over hide_layers: max(duration / hide_layers, duration - that compute's time), plus
//   charge_share of the part hidden (a backward's gathers hide behind that backward, a forward's
//   behind that forward).
struct CollectiveOverlap {
  int64_t lead_ns = 0;
  int64_t tail_ns = 0;
  double charge_share = 0;
  int64_t release_ns = 0;
  int32_t hide_layers = 0;
};

// How long compute action `kind` (F, B, I, W; STEP for any other) of a stage takes by `t`.
int64_t action_ns(const StageTiming& t, schedule::ActionKind kind);

// One tier of links: every rank has an egress and an ingress port per tier.
struct LinkSpec {
  double bandwidth_bytes_per_s = 1e12;
  int64_t latency_ns = 0;
};

struct EngineInput {
  const schedule::Schedule* schedule = nullptr;
  std::vector<StageTiming> stages;  // indexed by stage
  // Tier of the link between two ranks (index into `links`); empty: every pair uses links[0].
  std::function<int(int src_rank, int dst_rank)> tier_of;
  std::vector<LinkSpec> links = {LinkSpec{}};
  // Duration of a collective action issued by `rank`; empty: collectives are free.
  std::function<int64_t(int rank, const schedule::Action&)> collective_ns;
  // The link tier whose ports a collective of `rank` keeps busy while it runs (-1: none; empty:
  // none). Transfers through those ports meanwhile get a share of the bandwidth as if the
  // collective were one more transfer; the collective's own duration stays collective_ns's.
  std::function<int(int rank, const schedule::Action&)> collective_tier;
  // The share of `rank`'s processors (a GPU's SMs) a collective holds while it runs, in [0, 1);
  // empty or 0: none. Compute the rank runs meanwhile progresses at 1 - share of its rate (NCCL's
  // thread blocks hold their SMs for the whole collective, and the compute kernels beside them
  // get the rest): the time it adds is RankStats::sm_held_ns. Not with shared_processors.
  std::function<double(int rank, const schedule::Action&)> collective_sm_share;
  // Whether and how a collective issued by `rank` overlaps the compute beside it
  // (CollectiveOverlap); empty, or all 0: it starts when every member has reached it and its
  // stream is free, and what waits for it waits for its end.
  std::function<CollectiveOverlap(int rank, const schedule::Action&)> collective_overlap;
  // Pipeline transfers hold processors too (NCCL runs each send and receive as a kernel whose
  // thread blocks keep their SMs): per link tier, the share of a rank's processors one transfer on
  // that tier holds, in [0, 0.5); empty or 0: none. A SEND holds it on its sender while its
  // transfer runs; a RECV on its receiver from its posting (recvs_posted_ahead) until its data
  // arrives. Shares add to each other and to collectives' (at most 0.95 in all). Not with
  // shared_processors.
  std::vector<double> p2p_sm_share_by_tier;
  // Receives are posted ahead: a RECV when its rank's latest compute of the same direction before
  // it ends (a forward for RECV_F, a backward or input gradient for RECV_B; with none, its latest
  // compute of any kind), as Megatron-core's interleaved schedule with overlap_p2p_comm posts them
  // (docs/ACCURACY.md item 33). false: a RECV is posted when the cursor reaches it, and its
  // receiver computes nothing while it waits (a compute waits for the RECVs issued before it).
  bool recvs_posted_ahead = false;
  // Duration of each compute action (F, B, I, W, STEP) issued by `rank`; empty: `stages` gives
  // it. For replaying a measured run action by action (sim/predict/trace_replay_costs.h).
  std::function<int64_t(int rank, const schedule::Action&)> compute_action_ns;
  // > 0: the compute of all ranks shares this many processors (the CPU backend runs every rank
  // as a thread on the host's cores): n ranks computing at once each progress at
  // min(1, processors / n). 0: every rank computes on its own device.
  int shared_processors = 0;
  // A rank's compute waits for its earlier SENDs to complete, as with pipeline p2p calls that
  // return only when their transfers are done (Megatron-LM's megatron/p2p_communication.py waits
  // on every request and synchronizes the device; DeepSpeed's pipe p2p.send is a blocking
  // send). false: sends run on their own stream beside the compute (the executor's semantics).
  bool blocking_sends = false;
  // A rank's compute waits for its earlier gradient reductions (ALLREDUCE, REDUCESCATTER) to
  // complete, as in a framework that reduces gradients on the compute stream instead of beside
  // it (framework.h: grad_reduce "exposed"; DeepSpeed's ZeRO-2 without overlap_comm). false:
  // they overlap later compute and only STEP waits for its stage's.
  bool blocking_reductions = false;
  bool build_timeline = true;
  // Without a Timeline: still record when each op ran, for RankStats::busy_ns.
  bool record_busy = false;
  // Timeline metadata and names: the mesh coordinates print as in the executor's devices.
  std::string source = "sim";
};

struct RankStats {
  int64_t compute_ns = 0;        // sum of compute spans
  int64_t communication_ns = 0;  // sum of send, recv and collective spans
  int64_t end_ns = 0;            // when its last activity ended
  int64_t peak_activation_bytes = 0;
  // Of compute_ns, what collectives and transfers holding its SMs added
  // (EngineInput::collective_sm_share, p2p_sm_share_by_tier, and CollectiveOverlap::charge_share
  // of the part of an early-started collective that ran beside compute).
  int64_t sm_held_ns = 0;
  // Union of its activity spans (traces::analyze's busy time); with build_timeline or record_busy.
  int64_t busy_ns = 0;
};

struct EngineResult {
  int64_t step_time_ns = 0;  // last activity of any rank (the step starts at 0)
  std::vector<RankStats> ranks;
  int64_t actions = 0;        // actions executed
  int64_t events = 0;         // events popped
  traces::Timeline timeline;  // filled when build_timeline
};

// Throws SimulationError for an inconsistent schedule (a send without its recv, a collective whose
// members disagree) or one that deadlocks; std::invalid_argument for bad input (missing stage
// timings).
EngineResult simulate(const EngineInput& input);

}  // namespace meshscope::engine
