// The Timeline: what every producer (CPU executor, GPU capture, simulator, importers) emits and
// every consumer (analysis, Chrome export, GUI) reads. Integer nanoseconds throughout.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "traces/collective.h"
#include "traces/mesh_coord.h"
#include "traces/run_descriptor.h"

namespace meshscope::traces {

// What a span is. Stable values: they are written into traces and matched by the GUI's colours.
enum class SpanKind : uint8_t {
  kCompute = 0,  // math: a stage's forward/backward, a GPU kernel that is neither comm nor memory
  kSend = 1,     // point-to-point transfer, sending side
  kRecv = 2,     // point-to-point transfer, receiving side (only the transfer, not the wait)
  kCollective = 3,  // all-reduce, all-gather, reduce-scatter, all-to-all (e.g. NCCL kernels)
  kMemcpy = 4,      // GPU memcpy that is not a P2P transfer of the schedule
  kMemset = 5,
  kIdle = 6,        // derived: a gap in a device's activity inside the step window (a bubble)
  kHost = 7,        // host-side work: CUDA runtime/driver calls, CPU ops
  kAnnotation = 8,  // a range that groups other spans: NVTX ranges, user annotations, steps
  kCount
};
inline constexpr std::array<std::string_view, static_cast<size_t>(SpanKind::kCount)>
    kSpanKindNames = {"compute", "send", "recv", "collective", "memcpy",
                      "memset",  "idle", "host", "annotation"};

// Which part of a training step a span belongs to.
enum class Phase : uint8_t {
  kNone = 0,
  kForward = 1,
  kBackward = 2,    // full backward (input and weight gradients together)
  kInputGrad = 3,   // zero-bubble split: gradient w.r.t. the stage input
  kWeightGrad = 4,  // zero-bubble split: gradient w.r.t. the weights
  kOptimizer = 5,
  kCount
};
inline constexpr std::array<std::string_view, static_cast<size_t>(Phase::kCount)> kPhaseNames = {
    "none", "forward", "backward", "input_grad", "weight_grad", "optimizer"};

enum class LaneKind : uint8_t { kCompute = 0, kComm = 1, kHost = 2, kCount };
inline constexpr std::array<std::string_view, static_cast<size_t>(LaneKind::kCount)>
    kLaneKindNames = {"compute", "comm", "host"};

constexpr std::string_view name(SpanKind k) { return kSpanKindNames[static_cast<size_t>(k)]; }
constexpr std::string_view name(Phase p) { return kPhaseNames[static_cast<size_t>(p)]; }
constexpr std::string_view name(LaneKind k) { return kLaneKindNames[static_cast<size_t>(k)]; }
std::optional<SpanKind> parse_span_kind(std::string_view s);
std::optional<Phase> parse_phase(std::string_view s);
std::optional<LaneKind> parse_lane_kind(std::string_view s);

// True for the kinds that occupy a device (count as busy); false for idle, host and annotation.
constexpr bool is_device_activity(SpanKind k) {
  return k == SpanKind::kCompute || k == SpanKind::kSend || k == SpanKind::kRecv ||
         k == SpanKind::kCollective || k == SpanKind::kMemcpy || k == SpanKind::kMemset;
}
constexpr bool is_communication(SpanKind k) {
  return k == SpanKind::kSend || k == SpanKind::kRecv || k == SpanKind::kCollective;
}

struct Lane {
  std::string name;  // "compute", "comm", "stream 7", "host"
  LaneKind kind = LaneKind::kCompute;
};

struct Device {
  int rank = 0;      // global rank in a mesh run; GPU index for imported traces
  std::string name;  // "rank 3 · dp0 pp1 tp0", "GPU 0"
  MeshCoord coord;
  std::vector<Lane> lanes;
};

// One interval of activity. Kept small (48 bytes) because traces hold millions.
struct Span {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  int64_t bytes = 0;        // payload for transfers and collectives; 0 otherwise
  double flops = 0;         // floating-point operations of compute spans; 0 where unknown
  uint32_t name = 0;        // index into Timeline::strings
  int32_t microbatch = -1;  // -1: not tied to one microbatch
  uint16_t device = 0;      // index into Timeline::devices
  uint16_t lane = 0;        // index into that device's lanes
  int16_t stage = -1;       // pipeline stage (model chunk); -1 where none
  SpanKind kind = SpanKind::kCompute;
  Phase phase = Phase::kNone;

  int64_t duration_ns() const { return end_ns - begin_ns; }
};
static_assert(sizeof(Span) == 48, "Span must stay 48 bytes: traces hold millions of them");

// The canonical span order, Timeline::sort_spans's: by device, lane, begin, then end descending,
// so that an enclosing span comes before the spans it encloses.
inline bool canonical_before(const Span& x, const Span& y) {
  if (x.device != y.device) return x.device < y.device;
  if (x.lane != y.lane) return x.lane < y.lane;
  if (x.begin_ns != y.begin_ns) return x.begin_ns < y.begin_ns;
  return x.end_ns > y.end_ns;
}

// A causal arrow between two spans: a send and its recv, a launch and its kernel.
struct Flow {
  uint32_t from = 0;  // index into Timeline::spans
  uint32_t to = 0;
  // The "cat" of an imported flow event as its file had it (Kineto's "fwdbwd", "ac2g"; index
  // into Timeline::strings), kept with ImportOptions::keep_origins so that `convert` writes it
  // back; 0: none, and the exporter names the flow by the kinds of its spans.
  uint32_t category = 0;
};

struct CounterSample {
  int64_t t_ns = 0;
  double value = 0;
};

// A value over time on one device, e.g. activation memory in bytes.
struct Counter {
  uint16_t device = 0;
  std::string name;
  std::vector<CounterSample> samples;  // ordered by t_ns
};
inline constexpr std::string_view kActivationBytesCounter = "activation_bytes";

// The collective a span carries out (op, group, bytes, algorithm): a side table, so Span stays
// 48 bytes while collective spans are few.
struct SpanCollective {
  uint32_t span = 0;  // index into Timeline::spans
  Collective collective;
};

// How long a rank waited in a transfer or collective before its span began: meshscope's own runs
// start a recv's or collective's span once its data is ready, so that the wait shows as idle
// time, and record here when the rank reached it (begin_ns − wait_ns). A side table, like
// SpanCollective; spans without an entry began when their rank reached them (a GPU kernel that
// spins in NCCL, an imported range).
struct SpanWait {
  uint32_t span = 0;  // index into Timeline::spans; Timeline::waits is sorted by it
  int64_t wait_ns = 0;
};

// The bounds of one training step, across all devices.
struct StepWindow {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
};

// Interned strings: span names repeat (every "F s2 mb5" of every step), so spans hold an index.
class StringTable {
 public:
  StringTable();  // index 0 is always the empty string
  uint32_t intern(std::string_view s);
  std::string_view get(uint32_t id) const { return strings_[id]; }
  size_t size() const { return strings_.size(); }

 private:
  std::vector<std::string> strings_;
  std::unordered_map<std::string, uint32_t> index_;
};

// What an imported span was in its source file: Kineto's correlation id and stream and the args
// meshscope does not model, kept so that `convert` writes them back (HolisticTraceAnalysis and
// other tools key on them). Only spans that had any get one, and only when the importer was asked
// (ImportOptions::keep_origins), so analysis of a large trace pays nothing for them.
struct SpanOrigin {
  static constexpr int32_t kNoStream = INT32_MIN;
  static constexpr int64_t kNoCorrelation = INT64_MIN;
  uint32_t span = 0;  // index into Timeline::spans; Timeline::origins is sorted by it
  int32_t stream = kNoStream;
  int64_t correlation = kNoCorrelation;
  uint32_t args = 0;      // index into Timeline::origin_args; 0: none
  uint32_t category = 0;  // the event's "cat" (index into Timeline::strings); 0: none
};
static_assert(sizeof(SpanOrigin) == 24, "SpanOrigin: one per imported span, keep it small");

// The args objects of SpanOrigin, each the text of JSON object members without the braces
// (`"External id": 7, "cbid": 211`). One buffer and one offset per entry instead of a
// std::string each (32 bytes + a heap block) because a trace holds millions. Index 0 is empty.
class ArgsStore {
 public:
  uint32_t add(std::string_view members);  // empty text: 0
  std::string_view get(uint32_t id) const {
    return std::string_view(bytes_).substr(id == 0 ? 0 : ends_[id - 1],
                                           ends_[id] - (id == 0 ? 0 : ends_[id - 1]));
  }
  size_t size() const { return ends_.size(); }
  size_t bytes() const { return bytes_.size(); }
  // The raw layout, for the byte codec. assign() checks it and returns false when it is not one.
  const std::string& raw_bytes() const { return bytes_; }
  const std::vector<uint64_t>& raw_ends() const { return ends_; }
  bool assign(std::string bytes, std::vector<uint64_t> ends);

 private:
  std::string bytes_;
  std::vector<uint64_t> ends_{0};  // entry i is bytes_[ends_[i-1], ends_[i])
};

struct Timeline {
  std::vector<Device> devices;
  std::vector<Span> spans;
  std::vector<Flow> flows;
  std::vector<Counter> counters;
  std::vector<StepWindow> steps;  // empty: the whole timeline is one step
  StringTable strings;
  // What the run was, typed: read this, never the display strings below.
  RunDescriptor run;
  // The typed collective of each collective span that has one, sorted by span.
  std::vector<SpanCollective> collectives;
  // Free-form facts about the run for display: "source", "schedule", "mesh", "model",
  // "backend", importer notes, ... Nothing computes from them (see `run`).
  std::map<std::string, std::string> metadata;
  std::vector<SpanWait> waits;      // sorted by span, at most one per span, wait_ns > 0
  std::vector<SpanOrigin> origins;  // sorted by span, at most one per span
  ArgsStore origin_args;

  uint16_t add_device(int rank, std::string name, MeshCoord coord = {});
  uint16_t add_lane(uint16_t device, std::string name, LaneKind kind);
  uint32_t add_span(const Span& span);
  void add_flow(uint32_t from_span, uint32_t to_span, uint32_t category = 0) {
    flows.push_back({from_span, to_span, category});
  }
  std::string_view span_name(const Span& s) const { return strings.get(s.name); }
  // Records span's collective, keeping `collectives` sorted (replaces an earlier entry).
  void set_collective(uint32_t span, const Collective& c);
  // The collective of span `span`; nullptr when it has none.
  const Collective* collective_of(uint32_t span) const;

  // Records that span `span`'s rank reached it wait_ns before it began (SpanWait); a wait of 0
  // or less records nothing.
  void set_wait(uint32_t span, int64_t wait_ns);
  // When span `span`'s rank reached it: its begin less its recorded wait.
  int64_t reached_ns(uint32_t span) const;

  // The origin of span `index`, or nullptr (binary search over origins).
  const SpanOrigin* origin_of(uint32_t index) const;

  // Orders spans by (device, lane, begin_ns, end_ns descending) and rewrites flows and the span
  // side tables (collectives, waits, origins) to match.
  void sort_spans();
  // Earliest begin and latest end over all spans; {0, 0} when empty.
  StepWindow extent() const;
};

}  // namespace meshscope::traces
