// The critical path of a step: the chain of spans, across lanes and ranks, that decided when the
// step's last device work ended — walked back from it, at each span to the dependency that
// released it last.
//
// Dependencies of a span s (device activity or host work; annotations and idle are no work, except
// the two ends of a transfer between ranks, torch's c10d::send and its gloo:recv range, which are
// work on the path, as communication, though their span kind stays annotation or host):
//   lane order  the span on the same lane (stream, host thread, meshscope lane) with the latest
//               end at or before s's begin: a lane runs one thing at a time;
//   device      for device work, the device's work on any lane with the latest end at or before
//               s's begin: traces do not record a stream's waits on another stream's events,
//               so the device's last finished work stands in for them;
//   flows       every flow into s (a launch call -> its kernel, a send -> its recv), released at
//               min(source end, s begin): a kernel may start before its launch call returns;
//   late flows  a flow into s whose source began after s (a recv posted before its send began,
//               as pipeline ranks do): s could not finish before the source delivered, at its
//               end; the path charges s from then on and continues on the source;
//   collectives a collective instance's late arriver (analysis_stragglers.h, by arrival): another
//               device's span of that instance could not end before it joined, so the path
//               charges that span from the late arriver's span begin on and continues on the
//               late arriver.
//   syncs       a host call named *Synchronize* (cudaStreamSynchronize, ...) returned when its
//               rank's device work that ended last inside it finished: the path charges the call
//               from that end on and continues on that work.
// The path starts at the device-activity span of the window that ends last and steps to the
// dependency released latest, until none is left or the window's begin is passed. Each span is
// charged the part of it between its begin and its successor's release (the whole span for the
// last one); the gap between a release and the next span's begin is wait, charged to that span's
// rank — except, for host spans, the part of the gap their thread was busy (inside an enclosing
// op, e.g. the cpu_op around a launch call), which is host time. On a meshscope cpu run a compute
// span holds the collectives its action performs (a tp all-reduce, analysis.h): of its charge,
// the part its rank waited in them for the group is wait and their transfer communication (the
// path stays on the span; it does not follow the collective to the rank that arrived last). So
// per kind and per rank the charges add up to the path's length exactly.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "traces/analysis_intervals.h"
#include "traces/timeline.h"

namespace meshscope::traces {

enum class PathKind : uint8_t { kCompute = 0, kCommunication, kMemory, kHost, kWait, kCount };
inline constexpr std::array<std::string_view, static_cast<size_t>(PathKind::kCount)>
    kPathKindNames = {"compute", "communication", "memory", "host", "wait"};

struct PathStep {
  uint32_t span = 0;
  int64_t charged_ns = 0;  // the part of the span on the path
  int64_t wait_ns = 0;     // the gap before it (from its dependency's release)
  enum class Via : uint8_t { kStart, kLane, kFlow, kCollective, kDevice, kSync } via = Via::kStart;
};

struct CriticalPath {
  Interval window;
  int64_t begin_ns = 0;         // where the walk stopped
  int64_t end_ns = 0;           // the last device work's end
  std::vector<PathStep> steps;  // from the first span on the path to the last
  std::array<int64_t, static_cast<size_t>(PathKind::kCount)> by_kind{};
  std::map<int, int64_t> by_rank;  // rank -> ns
  int64_t length_ns() const { return end_ns - begin_ns; }
};

// One path per analysis window (analysis.h analysis_windows); none for a window without device
// activity.
std::vector<CriticalPath> critical_paths(const Timeline& t);

// When each step is on the path: the steps' waits and charges laid end to end from the path's
// begin, so step k's interval is its charged part, inside its span (a late flow's recv from its
// sender's end on, not from its own begin), and the gap before it the wait since its dependency's
// release. The intervals end at the path's end.
std::vector<Interval> charged_intervals(const CriticalPath& p);

nlohmann::json to_json(const std::vector<CriticalPath>& paths, const Timeline& t);
std::string format_critical_path(const std::vector<CriticalPath>& paths, const Timeline& t);

}  // namespace meshscope::traces
