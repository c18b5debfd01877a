// torch.distributed.pipelining's action names as its runtime writes them into profiler ranges:
// "PP:" + str(_Action) ("PP:1F0", "PP:6I3", "PP:1SEND_F0", "PP:0UNSHARD",
// "PP:(0F7;7B3)OVERLAP_F_B"), and ScheduleGPipe's "Forward i" / "Backward i". The grammar is
// torch's _action_regex in torch/distributed/pipelining/schedules.py (2.15):
// {stage}{type}{microbatch?}, the type one of the _ComputationType values, and "(" a ";"-separated
// list ")" OVERLAP_F_B for overlapped pairs. traces/ is the bottom library, so this small parser
// lives here rather than in sim/schedule.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "traces/timeline.h"

namespace meshscope::traces::importer {

// torch's _ComputationType, in one table with its token.
enum class TorchActionType : uint8_t {
  kForward = 0,       // F
  kBackward,          // B (full backward)
  kInputGrad,         // I
  kWeightGrad,        // W
  kSendForward,       // SEND_F
  kRecvForward,       // RECV_F
  kSendBackward,      // SEND_B
  kRecvBackward,      // RECV_B
  kWaitSendForward,   // WAIT_SEND_F
  kWaitSendBackward,  // WAIT_SEND_B
  kUnshard,           // UNSHARD
  kReshard,           // RESHARD
  kReduceGrad,        // REDUCE_GRAD
  kWaitReduceGrad,    // WAIT_REDUCE_GRAD
  kOverlapFB,         // OVERLAP_F_B: a forward and a backward run as one action
  kCount
};
inline constexpr std::array<std::string_view, static_cast<size_t>(TorchActionType::kCount)>
    kTorchActionTokens = {"F",           "B",
                          "I",           "W",
                          "SEND_F",      "RECV_F",
                          "SEND_B",      "RECV_B",
                          "WAIT_SEND_F", "WAIT_SEND_B",
                          "UNSHARD",     "RESHARD",
                          "REDUCE_GRAD", "WAIT_REDUCE_GRAD",
                          "OVERLAP_F_B"};
constexpr std::string_view token(TorchActionType t) {
  return kTorchActionTokens[static_cast<size_t>(t)];
}

constexpr bool is_compute(TorchActionType t) {
  return t == TorchActionType::kForward || t == TorchActionType::kBackward ||
         t == TorchActionType::kInputGrad || t == TorchActionType::kWeightGrad ||
         t == TorchActionType::kOverlapFB;
}
// The phase of the spans under an action: compute by its type, transfers by the pass they carry.
Phase phase_of(TorchActionType t);

struct TorchSubAction {
  TorchActionType type = TorchActionType::kForward;
  int32_t stage = -1;
  int32_t microbatch = -1;  // -1: not given (UNSHARD, REDUCE_GRAD, ...)
};

struct TorchAction {
  TorchActionType type = TorchActionType::kForward;
  int32_t stage = -1;  // -1 for OVERLAP_F_B (its parts have stages) and GPipe's ranges
  int32_t microbatch = -1;
  // OVERLAP_F_B: its parts in the order torch runs them (at most two in torch's schedules).
  std::array<TorchSubAction, 2> parts{};
  int part_count = 0;
  std::string text;  // as torch writes it, without "PP:" ("1F0", "(0F7;7B3)OVERLAP_F_B")
};

// Parses a profiler range name: "PP:<action>" (stage from the name) or ScheduleGPipe's
// "Forward i" / "Backward i" (stage -1: the caller knows the rank's one stage). nullopt for other
// names, and for PP: names torch's grammar does not accept.
std::optional<TorchAction> parse_torch_range(std::string_view range_name);

// torch's text of an action: what str(_Action) gives ("1F0", "0UNSHARD", "(0F7;7B3)OVERLAP_F_B").
std::string torch_action_text(TorchActionType type, int32_t stage, int32_t microbatch);

}  // namespace meshscope::traces::importer
