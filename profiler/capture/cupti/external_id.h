// External correlation ids: (step, rank, action index, inner index) packed into the 64-bit id
// pushed per action with cuptiActivityPushExternalCorrelationId and put in the NVTX range's
// payload, so the hot path pushes a number without a table and the builder decodes it without one.
#pragma once

#include <cstdint>
#include <optional>

namespace meshscope::capture::cupti {

struct ExternalKey {
  int step = 0;
  int rank = 0;
  int index = 0;   // the action's position in the rank's program
  int inner = -1;  // index into RunInfo::inner[rank] for a collective inside the action; -1: none
  friend bool operator==(const ExternalKey&, const ExternalKey&) = default;
};

// Layout: tag bit 63 (ours) | step 20 bits | rank 16 bits | index 16 bits | inner + 1, 11 bits.
inline constexpr uint64_t kExternalTag = uint64_t{1} << 63;
inline constexpr int kMaxSteps = 1 << 20;
inline constexpr int kMaxRanks = 1 << 16;
inline constexpr int kMaxActions = 1 << 16;
inline constexpr int kMaxInner = (1 << 11) - 1;

constexpr uint64_t encode(const ExternalKey& k) {
  return kExternalTag | (static_cast<uint64_t>(k.step) << 43) |
         (static_cast<uint64_t>(k.rank) << 27) | (static_cast<uint64_t>(k.index) << 11) |
         static_cast<uint64_t>(k.inner + 1);
}

constexpr std::optional<ExternalKey> decode_external_id(uint64_t id) {
  if ((id & kExternalTag) == 0) return std::nullopt;
  ExternalKey k;
  k.step = static_cast<int>((id >> 43) & (kMaxSteps - 1));
  k.rank = static_cast<int>((id >> 27) & (kMaxRanks - 1));
  k.index = static_cast<int>((id >> 11) & (kMaxActions - 1));
  k.inner = static_cast<int>(id & 0x7FF) - 1;
  return k;
}

}  // namespace meshscope::capture::cupti
