// What a span means to the viewer (forward, backward, ..., send, bubble) and the colour each is
// drawn in. One enum with constexpr name and colour tables; the pixel tests read the same table.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "traces/timeline.h"

namespace meshscope::gui {

enum class Activity : uint8_t {
  kForward = 0,
  kBackward = 1,
  kInputGrad = 2,
  kWeightGrad = 3,
  kOptimizer = 4,
  kCompute = 5,  // compute without a training phase (an imported kernel)
  kSend = 6,
  kRecv = 7,
  kCollective = 8,
  kMemory = 9,  // memcpy, memset
  kIdle = 10,   // a bubble
  kHost = 11,
  kAnnotation = 12,
  kCount
};

inline constexpr std::array<std::string_view, static_cast<size_t>(Activity::kCount)>
    kActivityNames = {"forward", "backward", "input grad", "weight grad", "optimizer",
                      "compute", "send",     "recv",       "collective",  "memory",
                      "bubble",  "host",     "annotation"};
constexpr std::string_view name(Activity a) { return kActivityNames[static_cast<size_t>(a)]; }

// Colours as Dear ImGui packs them (IM_COL32: red in the low byte, alpha in the high one).
constexpr uint32_t rgba(uint8_t r, uint8_t g, uint8_t b, uint8_t a = 255) {
  return static_cast<uint32_t>(r) | static_cast<uint32_t>(g) << 8 | static_cast<uint32_t>(b) << 16 |
         static_cast<uint32_t>(a) << 24;
}

// Distinct hues per phase; communication in yellows and oranges; the bubble a red nothing else
// uses, so idle time stands out and the pixel tests can find it exactly.
inline constexpr std::array<uint32_t, static_cast<size_t>(Activity::kCount)> kActivityColors = {
    rgba(66, 133, 244),   // forward: blue
    rgba(52, 168, 83),    // backward: green
    rgba(0, 172, 193),    // input grad: cyan
    rgba(156, 39, 176),   // weight grad: purple
    rgba(141, 110, 99),   // optimizer: brown
    rgba(92, 107, 192),   // compute: indigo
    rgba(251, 140, 0),    // send: orange
    rgba(255, 202, 40),   // recv: amber
    rgba(255, 238, 88),   // collective: yellow
    rgba(0, 121, 107),    // memory: dark teal
    rgba(211, 47, 47),    // bubble: red
    rgba(120, 144, 156),  // host: blue grey
    rgba(84, 110, 122),   // annotation: slate
};
constexpr uint32_t color_of(Activity a) { return kActivityColors[static_cast<size_t>(a)]; }

inline constexpr uint32_t kFoldedColor = rgba(117, 117, 117);
inline constexpr uint32_t kBubbleColor = color_of(Activity::kIdle);

constexpr Activity activity_of(traces::SpanKind kind, traces::Phase phase) {
  using traces::Phase;
  using traces::SpanKind;
  switch (kind) {
    case SpanKind::kCompute:
      switch (phase) {
        case Phase::kForward:
          return Activity::kForward;
        case Phase::kBackward:
          return Activity::kBackward;
        case Phase::kInputGrad:
          return Activity::kInputGrad;
        case Phase::kWeightGrad:
          return Activity::kWeightGrad;
        case Phase::kOptimizer:
          return Activity::kOptimizer;
        default:
          return Activity::kCompute;
      }
    case SpanKind::kSend:
      return Activity::kSend;
    case SpanKind::kRecv:
      return Activity::kRecv;
    case SpanKind::kCollective:
      return Activity::kCollective;
    case SpanKind::kMemcpy:
    case SpanKind::kMemset:
      return Activity::kMemory;
    case SpanKind::kIdle:
      return Activity::kIdle;
    case SpanKind::kHost:
      return Activity::kHost;
    default:
      return Activity::kAnnotation;
  }
}
constexpr Activity activity_of(const traces::Span& s) { return activity_of(s.kind, s.phase); }

}  // namespace meshscope::gui
