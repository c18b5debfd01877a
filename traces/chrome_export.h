// Chrome Trace Event Format export of a Timeline, streamed (bounded memory) and written whole or
// not at all. Opens in Perfetto (ui.perfetto.dev) and chrome://tracing.
//
// The file (object form; version 2 of meshscope's layout, which the importer reads back so that
// import(export(T)) == T; Kineto's (PyTorch profiler's) names wherever Kineto has one, so tools
// made for PyTorch traces read it: see chrome_kineto.h for the mapping and what HTA makes of it):
// {
//   "displayTimeUnit": "ns",
//   "meshscope": {"version": 2,
//                 "metadata": {Timeline::metadata, string -> string},
//                 "steps": [{"begin_ns": int, "end_ns": int}, ...]},      // Timeline::steps
//   "meshscope_run": {"source": name(RunSource), "backend": text,      // Timeline::run; left
//                     "mesh": {"dp": int, "pp": int, "tp": int},       // out when nothing is
//                     "family": name, "schedule": name, "microbatches": int, // known; 0 and ""
//                     "stages": int, "virtual_stages": int,            // where not known
//                     "workload": {"kind": name(ModelKind), "layers", "hidden", "heads", "seq",
//                                  "vocab", "image", "batch", "experts", "top_k",
//                                  "ep": int, "capacity_factor": number},
//                     "hardware": catalog name, "cores": int, "gpu": board name,
//                     "process_group_backend": name, "replicas_simulated_once": bool,
//                     "sim_config": JSON text},  // a file from before these five has them
//                                                // as "metadata" strings, which the importer
//                                                // reads instead (chrome_run_descriptor.h)
//   "distributedInfo": {"rank": r, "world_size": w},   // Kineto's; only when the Timeline is one
//                                                      // rank's (one_rank), world_size if known
//   "traceEvents": [
//     -- for each device d (pid = d, the device index), then each of its lanes l (tid = l + 1:
//        Perfetto reads tid 0 as "no tid" and moves it to tid == pid; since stop 68, older files
//        have tid = l and read the same):
//     {"ph":"M","name":"process_name","pid":d,"tid":1,
//      "args":{"name": Device::name, "rank": r, "dp": i, "pp": j, "tp": k}},
//     {"ph":"M","name":"process_sort_index","pid":d,"tid":1,"args":{"sort_index": position of
//      the device in (rank, index) order}},
//     {"ph":"M","name":"thread_name","pid":d,"tid":l+1,"args":{"name": Lane::name,
//      "lane_kind": "compute"|"comm"|"host"}},
//     {"ph":"M","name":"thread_sort_index","pid":d,"tid":l+1,"args":{"sort_index": l}},
//        then, past its lanes, the device's extra threads (tid = lanes + j + 1), named
//        "LANE (overlapping k)" with their lane's kind and "lane": the lane's tid: where a lane's
//        slices overlap without nesting, which Perfetto would drop, the export moves them there
//        (chrome_threads.h), and the importer puts them back on that lane;
//     -- one X event per span, in Timeline::spans order (the k-th X event is span k):
//     {"ph":"X","cat": kineto_category ("kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime",
//      "cuda_driver", "cpu_op", "user_annotation", "gpu_user_annotation", or "idle"),
//      "name": span name,"pid": device,"tid": lane + 1 (or its extra thread),"ts": µs,"dur": µs,
//      "args":{"kind": name(SpanKind) ("compute", "send", ..., "idle"; what the importer reads),
//              "device": d, "stream": kineto_stream,          (device work only: Kineto's args;
//                                      an imported span only where its source had a stream)
//              "correlation": c,                  (both ends of a host -> device launch flow)
//              "stage": s, "microbatch": m, "phase": name(Phase), "bytes": b, "flops": f,
//              "collective_op": name(CollectiveOp), "collective_group": name(GroupKind),
//              "collective_bytes": int, "collective_algorithm": name(CollectiveAlgorithm),
//              "collective_ranks": int (where Collective::ranks is set),
//              "collective_first_rank", "collective_rank_stride": int (where its members are
//              known), "waited_ns": int}},
//        (stage, microbatch, phase, bytes, flops only where set: stage/microbatch != -1,
//         phase != none, bytes/flops != 0; collective_* for spans in Timeline::collectives;
//         waited_ns for spans in Timeline::waits: how long the rank waited before the span)
//        A span with an origin (Timeline::origins, kept by ImportOptions::keep_origins) is
//        written as its source had it: "cat" the source's category, "stream" and "correlation"
//        the source's ids, then the source's other args as they were read (Kineto's "device",
//        "External id", "grid", ...; "device" from meshscope only where the source kept none).
//        Launch flows between spans without their own correlation id take ids past the largest
//        imported one, so no id repeats.
//     -- two events per flow, in Timeline::flows order (id = flow index); "span" is the index of
//        the span each end binds to, so the binding is exact even where slices nest:
//     {"ph":"s","cat":c,"name":c,"id":i,"pid","tid","ts": begin of the from-span,"bp":"e",
//      "args":{"span": from}},
//     {"ph":"f","cat":c,"name":c,"id":i,"pid","tid","ts": begin of the to-span, or the
//      from-span's begin where that is later (clamped to the to-span's end: Perfetto drops a
//      flow that ends before it starts),"bp":"e","args":{"span": to}},
//        (c = the flow's category as imported (Flow::category), else "ac2g" for a host launch ->
//         device activity, as Kineto names it, "p2p" for a send -> recv, "flow" otherwise; for
//         an "ac2g" flow the spans' "correlation" is i where they have none of their own)
//     -- one C event per counter sample, in Timeline::counters order:
//     {"ph":"C","name": Counter::name,"pid": device,"ts": µs,"args":{"value": v}}
//   ]
// }
// Version 1 (before Kineto's names) wrote cat = name(SpanKind) and no "kind" arg; the importer
// still reads it.
// Times: ts/dur are microseconds with exactly three decimals, formatted from the integer
// nanoseconds (1234567 ns -> 1234.567), so no float rounding ever enters; a whole microsecond is
// an integer (1234000 ns -> 1234), which Perfetto reads exactly where it reads a decimal as a
// double (256 ns steps at Kineto's epoch times). Strings are escaped
// JSON; bytes that are not valid UTF-8 become U+FFFD. Non-finite counter values and flops (which
// JSON cannot hold) are left out. Idle spans are exported like any other span (cat "idle", no
// stream), so call add_idle_spans() first to show bubbles.
//
// A Timeline that cannot be exported faithfully (a span with end < begin, a device, lane or flow
// index out of range) throws std::invalid_argument naming the span or flow; the file is then not
// written.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include "traces/timeline.h"

namespace meshscope::traces {

inline constexpr int kChromeFormatVersion = 2;

// Streams the trace to `sink` in chunks of about 1 MiB; memory does not grow with the number of
// spans (only with the number of distinct strings and of host -> device launch flows).
void write_chrome_trace(const Timeline& t, const std::function<void(std::string_view)>& sink);

// Writes the trace to `path` through AtomicFile: the old file (if any) stays intact on failure.
void write_chrome_trace(const Timeline& t, const std::filesystem::path& path);
// Into `out`, neither synced nor committed: for a command that writes several files and syncs
// each before it commits any (AtomicFile::sync).
class AtomicFile;
void write_chrome_trace(const Timeline& t, AtomicFile& out);

// The whole trace as one string (tests, small traces).
std::string export_chrome_json(const Timeline& t);

// About how many bytes the export of `t` takes, uncompressed, before writing it (to warn of a
// file too large to open): 200 per span, 225 per flow (its two events), 92 per counter sample,
// 180 per device and lane (a name and a sort index each), 2,000 for the header. Measured on a
// simulated trace, `meshscope simulate --config sim/predict/configs/korthikanti-175b.json
// --all-devices --out k.json`: 195 bytes per "X" event, 112 per "s" or "f", 91 per "C", 90 per
// "M", the header under 1,500 (7,549,898 bytes in all). Imported traces, whose events keep their
// source's args, run larger.
int64_t estimated_chrome_bytes(const Timeline& t);

// "1234.567" for 1234567 ns; "-0.005" for -5 ns. Exact for every int64.
std::string format_chrome_us(int64_t ns);

}  // namespace meshscope::traces
