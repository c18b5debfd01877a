// HolisticTraceAnalysis 0.5's own figures (temporal breakdown, communication-computation overlap,
// per-stream idle split) from a Kineto trace's raw events, reproducing HTA's defaults so that
// `meshscope analyze --window hta` shows an HTA user the numbers HTA shows.
//
// What HTA 0.5 does by default, and so what this does (source: HolisticTraceAnalysis 0.5.0,
// hta/common/trace_parser.py, hta/common/trace.py, hta/common/trace_filter.py,
// hta/analyzers/breakdown_analysis.py, hta/analyzers/communication_analysis.py,
// hta/utils/utils.py):
//   events     Only trace events with both `dur` and `cat`; cat "Trace" dropped. An event's stream
//              is int(args.stream) (-1 when absent or not a number), its correlation
//              args.correlation (-1 when absent). Times in µs.
//   rounding   When the file's `ts` column is floating point (some ts is not an integer, or some
//              event has none), every start is rounded up and every end (ts + dur) down to a
//              whole µs (trace_parser.round_down_time_stamps). Events shorter than the rounding
//              then get end < start, and HTA keeps them so: their negative length counts.
//   GPU event  stream >= 0 and correlation >= 0, or named "Event Sync" / "Context Sync"; every
//              other event is a CPU event.
//   step filter  When the run holds >= 2 distinct names containing "ProfilerStep": per rank, CPU
//              events are kept when they start before the last ProfilerStep starts, and GPU
//              events only when their correlation equals a kept CPU event's (once per such CPU
//              event: HTA joins them); everything else is dropped (trace._filter_irrelevant_gpu_
//              kernels, include_last_profiler_step=False). With 0 or 1 such names: no filter.
//   kernels    Every kept event with stream != -1 (whatever its category: a cuda_sync event with
//              a stream, or a CPU op carrying a stream arg, counts as GPU time).
//   kernel_time  From the first kernel's start to the end of the last merged interval
//              (merge_kernel_intervals: sorted by start, a new interval where a start lies past
//              the running maximum end). idle = kernel_time − Σ (merged end − start).
//   kinds by name  communication: ^nccl.*Kernel; memory: ^Memcpy|^Memset|^dma; computation: not
//              ^nccl.*Kernel, not containing "Memcpy", not starting "Memset", not containing
//              "Sync". compute = Σ merged computation; non-compute = kernel_time − compute − idle.
//   overlap    |merged communication ∩ merged computation| / Σ merged communication length;
//              none without communication kernels (HTA: NaN).
//   idle split Per stream (events of category kernel/Kernel/gpu_memcpy/Memcpy/gpu_memset/Memset/
//              mtia_ccp_events only), sorted by start: the gap from the previous event's end to
//              this one's start is host wait when the CPU event correlated with it started after
//              that end, else kernel wait when shorter than consecutive_kernel_delay (30 in µs,
//              the units HTA compares in), else other. Streams are summed separately, so their
//              sum may exceed the rank's idle time.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace meshscope::traces {

// One trace event with `dur` and `cat`, as HTA's data frame row holds it.
struct HtaEvent {
  int64_t index = 0;  // position in traceEvents (HTA's "index" column)
  double ts_us = 0;   // as parsed from the file
  double dur_us = 0;
  int64_t stream = -1;
  int64_t correlation = -1;
  uint32_t name = 0;  // into HtaEventTable::strings
  uint32_t cat = 0;
};

// One Kineto file's events for HTA (traces/import/hta_events.h reads them).
struct HtaEventTable {
  std::string file;
  int rank = 0;           // distributedInfo.rank, else 0 (as HTA)
  bool float_ts = false;  // HTA's ts column is floating point: rounding applies
  // meshscope_run.source of a file meshscope wrote ("cpu", "sim", "kineto" for a converted
  // Kineto trace, ...); empty for a file of another tool.
  std::string meshscope_source;
  bool distributed_info = false;  // the file has a distributedInfo object (one rank's trace)
  // The ranks its process_name metadata events name in args.rank (what meshscope writes for each
  // device): one for a trace of one rank without distributedInfo (an Nsight Systems import).
  std::set<int64_t> process_ranks;
  std::vector<HtaEvent> events;
  std::vector<std::string> strings;  // index 0 is ""
};

struct HtaStreamIdle {
  int64_t stream = 0;
  double host_wait_us = 0;
  double kernel_wait_us = 0;
  double other_us = 0;
};

struct HtaRankFigures {
  std::string file;
  int rank = 0;
  bool rounded = false;            // ns rounding applied
  bool step_filter = false;        // the last-step / uncorrelated-GPU-event filter applied
  int64_t kernels = 0;             // events with a stream that the figures cover
  int64_t gpu_events_dropped = 0;  // GPU events the step filter removed
  double kernel_time_us = 0;
  double idle_us = 0;
  double compute_us = 0;
  double non_compute_us = 0;
  double communication_us = 0;
  double overlap_us = 0;        // communication ∩ computation
  double idle_fraction = 0;     // idle / kernel_time
  double compute_fraction = 0;  // compute / kernel_time
  double non_compute_fraction = 0;
  std::optional<double> comm_compute_overlap;  // overlap / communication; none without comm
  std::vector<HtaStreamIdle> streams;          // by stream id
};

struct HtaWindowOptions {
  double consecutive_kernel_delay_us = 30;  // HTA 0.5 get_idle_time_breakdown's default
};

// True when the run's files together name >= 2 distinct events containing "ProfilerStep".
bool hta_step_filter_applies(const std::vector<HtaEventTable>& run);

// The figures of one rank. Throws std::runtime_error naming the file when no kernel is left
// (HTA fails there too).
HtaRankFigures hta_rank_figures(const HtaEventTable& table, bool step_filter,
                                const HtaWindowOptions& options = {});

// JSON of one rank's figures: times in integer ns (µs × 1000), fractions in [0, 1].
nlohmann::json to_json(const HtaRankFigures& f);

// The text table of `analyze --window hta`.
std::string format_hta_window_table(const std::vector<HtaRankFigures>& ranks);

}  // namespace meshscope::traces
