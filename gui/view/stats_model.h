// The stats panel's numbers: per-device stacked bars of where the step's time went, the overall
// bubble fraction and step time, and the largest idle gaps (click to jump to one).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "gui/view/activity.h"
#include "traces/analysis.h"
#include "traces/timeline.h"

namespace meshscope::gui {

// The parts of one device's window time; they add up to the window exactly.
enum class StatPart : uint8_t {
  kCompute = 0,    // compute without communication at the same time
  kOverlap = 1,    // compute and communication at once
  kComm = 2,       // communication alone
  kOtherBusy = 3,  // memcpy, memset
  kWarmup = 4,     // bubble while the pipeline fills
  kPeerWait = 5,   // bubble in the steady state: waiting on a peer
  kCooldown = 6,   // bubble while the pipeline drains
  kIdle = 7,       // idle the attribution could not place (no stage annotations)
  kCount
};
inline constexpr std::array<std::string_view, static_cast<size_t>(StatPart::kCount)>
    kStatPartNames = {
        "compute",          "overlap",          "comm", "other busy", "warm-up bubble",
        "peer-wait bubble", "cool-down bubble", "idle"};
constexpr std::string_view name(StatPart p) { return kStatPartNames[static_cast<size_t>(p)]; }
// Compute in the timeline's "compute" indigo (forward's blue had read as forward time alone);
// overlap a light cyan, apart from the memory teal of "other busy" (two teals had read as one).
inline constexpr std::array<uint32_t, static_cast<size_t>(StatPart::kCount)> kStatPartColors = {
    color_of(Activity::kCompute),
    rgba(77, 208, 225),
    color_of(Activity::kSend),
    color_of(Activity::kMemory),
    rgba(239, 154, 154),
    kBubbleColor,
    rgba(183, 28, 28),
    rgba(229, 115, 115)};
constexpr uint32_t color_of(StatPart p) { return kStatPartColors[static_cast<size_t>(p)]; }

struct StatsBar {
  uint16_t device = 0;
  std::array<int64_t, static_cast<size_t>(StatPart::kCount)> ns{};
  int64_t idle_ns = 0;
  double bubble_fraction = 0;
};

struct IdleGap {
  uint32_t span = 0;  // the kIdle span
  uint16_t device = 0;
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
};

struct StatsModel {
  std::vector<StatsBar> bars;  // one per analysed device, in device order (no host-only ones)
  size_t host_devices = 0;     // host-only devices (traces::is_host_only): no bar, not counted
  int64_t window_ns = 0;       // per device: the sum of the step windows
  int64_t step_time_ns = 0;
  size_t steps = 0;
  double bubble_fraction = 0;
  std::vector<IdleGap> largest_gaps;  // longest first
};

// `a` must be traces::analyze(t); the gaps are t's kIdle spans (traces::add_idle_spans).
StatsModel build_stats(const traces::Timeline& t, const traces::TimelineAnalysis& a,
                       size_t max_gaps);

}  // namespace meshscope::gui
