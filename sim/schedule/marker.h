// Tokens torch.distributed.pipelining writes that are not one meshscope action: the markers
// meshscope keeps but does not run, and the OVERLAP_F_B group of compute actions.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/schedule/action.h"

namespace meshscope::schedule {

// Why each is kept and not run: kIdle is torch's None (a deliberate idle step of its grid; torch's
// runtime skips it too); UNSHARD / RESHARD gather and free FSDP-sharded parameters, and meshscope's
// stages are not sharded; REDUCE_GRAD / WAIT_REDUCE_GRAD reduce gradients over data parallelism,
// which meshscope does with its own ALLREDUCE(dp) before STEP; WAIT_SEND_F / WAIT_SEND_B retire a
// send, and meshscope's sends are eager (validator.h). Stable values.
enum class MarkerKind : uint8_t {
  kIdle = 0,
  kUnshard = 1,
  kReshard = 2,
  kReduceGrad = 3,
  kWaitReduceGrad = 4,
  kWaitSendForward = 5,
  kWaitSendBackward = 6,
  kCount
};
inline constexpr std::array<std::string_view, static_cast<size_t>(MarkerKind::kCount)>
    kMarkerTokens = {
        "", "UNSHARD", "RESHARD", "REDUCE_GRAD", "WAIT_REDUCE_GRAD", "WAIT_SEND_F", "WAIT_SEND_B"};
constexpr std::string_view token(MarkerKind k) { return kMarkerTokens[static_cast<size_t>(k)]; }
constexpr bool has_microbatch(MarkerKind k) {
  return k == MarkerKind::kWaitSendForward || k == MarkerKind::kWaitSendBackward;
}

// One kept marker of a rank's program, placed before the action at index `before` of that rank's
// action list (== its length: after the last action).
struct Marker {
  MarkerKind kind = MarkerKind::kIdle;
  int32_t stage = -1;       // -1 for kIdle
  int32_t microbatch = -1;  // WAIT_SEND_F / WAIT_SEND_B only
  int32_t before = 0;

  friend bool operator==(const Marker&, const Marker&) = default;
};

// The marker's token as torch writes it ("0UNSHARD", "2WAIT_SEND_F3"; kIdle is empty). In
// meshscope's schedule text an idle step is written kIdleText.
std::string to_string(const Marker& m);
inline constexpr std::string_view kIdleText = "-";
// Parses a non-empty marker token (not kIdleText); `before` is left 0. nullopt if it is not one.
std::optional<Marker> parse_marker(std::string_view token, std::string* error = nullptr);

// "(0F3;3B1)OVERLAP_F_B": compute actions torch runs as one action (DualPipeV's overlapped
// forward and backward). Meshscope sets Action::overlap_next on all but the last of the group and
// runs them in order, as torch's runtime does when no custom OVERLAP_F_B function is registered.
inline constexpr std::string_view kOverlapToken = "OVERLAP_F_B";
std::string overlap_to_string(std::span<const Action> group);
// Parses "(a;b;...)OVERLAP_F_B" whose members are compute actions ("0F3", "3B1"); the result has
// overlap_next set on all but its last member.
std::optional<std::vector<Action>> parse_overlap(std::string_view token,
                                                 std::string* error = nullptr);

// A token quoted for an error message: non-printable bytes as \xNN, at most 40 characters.
std::string quote_token(std::string_view token);

}  // namespace meshscope::schedule
