// One step of one rank's program: compute, a point-to-point transfer, a collective or the
// optimizer step. Written like torch.distributed.pipelining's _Action ("2F0", "0SEND_F1").
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sim/mesh/mesh.h"

namespace meshscope::schedule {

using mesh::GroupKind;

// Stable values; the text token of each kind is in kActionTokens.
enum class ActionKind : uint8_t {
  kForward = 0,       // F: stage forward of one microbatch
  kBackward = 1,      // B: full backward (input + weight gradients)
  kInputGrad = 2,     // I: gradient w.r.t. the stage input only (zero-bubble)
  kWeightGrad = 3,    // W: gradient w.r.t. the weights only (zero-bubble), after its I
  kSendForward = 4,   // SEND_F: send the stage's output activation to the next stage
  kRecvForward = 5,   // RECV_F: receive the stage's input activation from the previous stage
  kSendBackward = 6,  // SEND_B: send the gradient of the stage's input to the previous stage
  kRecvBackward = 7,  // RECV_B: receive the gradient of the stage's output from the next stage
  kAllReduce = 8,     // collectives over a named group (dp: gradients of the stage)
  kAllGather = 9,
  kReduceScatter = 10,
  kAllToAll = 11,
  kOptimizerStep = 12,  // STEP: apply the stage's accumulated gradients
  kCount
};
inline constexpr std::array<std::string_view, static_cast<size_t>(ActionKind::kCount)>
    kActionTokens = {"F",      "B",      "I",         "W",         "SEND_F",        "RECV_F",
                     "SEND_B", "RECV_B", "ALLREDUCE", "ALLGATHER", "REDUCESCATTER", "ALLTOALL",
                     "STEP"};
constexpr std::string_view token(ActionKind k) { return kActionTokens[static_cast<size_t>(k)]; }

constexpr bool is_compute(ActionKind k) {
  return k == ActionKind::kForward || k == ActionKind::kBackward || k == ActionKind::kInputGrad ||
         k == ActionKind::kWeightGrad;
}
constexpr bool is_p2p(ActionKind k) {
  return k == ActionKind::kSendForward || k == ActionKind::kRecvForward ||
         k == ActionKind::kSendBackward || k == ActionKind::kRecvBackward;
}
constexpr bool is_send(ActionKind k) {
  return k == ActionKind::kSendForward || k == ActionKind::kSendBackward;
}
constexpr bool is_recv(ActionKind k) {
  return k == ActionKind::kRecvForward || k == ActionKind::kRecvBackward;
}
constexpr bool is_collective(ActionKind k) {
  return k == ActionKind::kAllReduce || k == ActionKind::kAllGather ||
         k == ActionKind::kReduceScatter || k == ActionKind::kAllToAll;
}

// The groups a schedule's collectives name: the mesh's axes. The ep and edp groups are the moe
// blocks' own (their all-to-alls run inside F, B and I, their expert gradients' all-reduce inside
// ALLREDUCE(dp): profiler/exec/moe_block.h); a schedule's mesh does not carry ep.
constexpr bool is_schedule_group(GroupKind g) {
  return g == GroupKind::kWorld || g == GroupKind::kDp || g == GroupKind::kPp ||
         g == GroupKind::kTp;
}

// Text forms (one token, no spaces):
//   compute     {stage}{F|B|I|W}{microbatch}                 "2F0", "1I3"
//   p2p         {stage}{SEND_F|RECV_F|SEND_B|RECV_B}{mb}[@{peer rank}][:{bytes}]
//                                                            "0SEND_F1", "0SEND_F1@1:4096"
//   collective  {stage}{ALLREDUCE|ALLGATHER|REDUCESCATTER|ALLTOALL}({group})[:{bytes}]
//                                                            "3ALLREDUCE(dp):1048576"
//   optimizer   {stage}STEP                                  "0STEP"
// For p2p, `stage` is the stage on this rank that sends or receives (torch's convention).
struct Action {
  ActionKind kind = ActionKind::kForward;
  GroupKind group = GroupKind::kWorld;  // collectives only
  int32_t stage = 0;
  int32_t microbatch = -1;  // -1 for per-step actions (collectives on gradients, STEP)
  int32_t peer = -1;        // p2p only: global rank on the other side; -1 when not given
  int64_t bytes = 0;        // p2p and collectives: payload per rank; 0 when not given
  // Compute only: this action and the next form one torch OVERLAP_F_B group (marker.h), run in
  // order. Written "(0F3;3B1)OVERLAP_F_B" in schedule text and torch's CSV.
  bool overlap_next = false;

  friend bool operator==(const Action&, const Action&) = default;
};

std::string to_string(const Action& a);
// Parses one token; on failure returns nullopt and, if `error` is given, says why.
std::optional<Action> parse_action(std::string_view token, std::string* error = nullptr);

}  // namespace meshscope::schedule
