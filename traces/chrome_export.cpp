// Streams a Timeline as Chrome Trace Event Format JSON; layout documented in chrome_export.h.
#include "traces/chrome_export.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "traces/atomic_file.h"
#include "traces/chrome_export_text.h"
#include "traces/chrome_kineto.h"
#include "traces/chrome_threads.h"
#include "traces/gzip_writer.h"

namespace meshscope::traces {
namespace {

namespace jt = json_text;
constexpr size_t kChunkBytes = size_t{1} << 20;

class ChromeWriter {
 public:
  ChromeWriter(const Timeline& t, const std::function<void(std::string_view)>& sink)
      : t_(t), sink_(sink), threads_(plan_threads(t)) {
    buf_.reserve(kChunkBytes + 4096);
    // Span names repeat millions of times; escape each distinct one once.
    names_.reserve(t.strings.size());
    for (size_t i = 0; i < t.strings.size(); ++i) {
      names_.emplace_back();
      jt::append_string(names_.back(), t.strings.get(static_cast<uint32_t>(i)));
    }
    // Kineto's correlation id on both ends of each launch flow (the first one a span has), for
    // spans without one of their own: numbered past the imported ids so that none repeats.
    int64_t first_id = 0;
    for (const SpanOrigin& o : t.origins) {
      if (o.correlation != SpanOrigin::kNoCorrelation && o.correlation >= first_id &&
          o.correlation < INT64_MAX - static_cast<int64_t>(t.flows.size())) {
        first_id = o.correlation + 1;
      }
    }
    for (size_t i = 0; i < t.flows.size(); ++i) {
      const Flow& f = t.flows[i];
      if (f.from >= t.spans.size() || f.to >= t.spans.size()) continue;  // flow_events throws
      if (flow_name(t, f) != kLaunchFlow) continue;
      correlation_.try_emplace(f.from, first_id + static_cast<int64_t>(i));
      correlation_.try_emplace(f.to, first_id + static_cast<int64_t>(i));
    }
  }

  void write() {
    buf_ += "{\"displayTimeUnit\":\"ns\",\n\"meshscope\":";
    header();
    run_descriptor();
    distributed_info();
    buf_ += ",\n\"traceEvents\":[";
    for (size_t d = 0; d < t_.devices.size(); ++d) device_metadata(d);
    for (size_t i = 0; i < t_.spans.size(); ++i) span_event(i);
    for (size_t i = 0; i < t_.flows.size(); ++i) flow_events(i);
    for (const Counter& c : t_.counters) counter_events(c);
    buf_ += "\n]}\n";
    flush();
  }

 private:
  void begin_event() {
    buf_ += first_event_ ? "\n{" : ",\n{";
    first_event_ = false;
  }
  void end_event() {
    buf_ += '}';
    if (buf_.size() >= kChunkBytes) flush();
  }
  void flush() {
    sink_(buf_);
    buf_.clear();
  }
  void key(std::string_view k) {
    buf_ += '"';
    buf_ += k;
    buf_ += "\":";
  }
  // Thread t of a device is written tid t + 1: Perfetto's JSON importer takes tid 0 for "no tid"
  // and moves such events to tid == pid (json_trace_tokenizer.cc: "Make the tid equal to the pid
  // if tid is not set"), which put device d's lane 0 on its lane d, whose slices then did not nest
  // and were dropped. The pid stays the device (Kineto's GPU events have pid == device).
  void pid_tid(size_t pid, size_t tid) {
    buf_ += ",\"pid\":";
    jt::append_int(buf_, static_cast<int64_t>(pid));
    buf_ += ",\"tid\":";
    jt::append_int(buf_, static_cast<int64_t>(tid) + 1);
  }

  void header() {
    buf_ += "{\"version\":";
    jt::append_int(buf_, kChromeFormatVersion);
    buf_ += ",\"metadata\":{";
    bool first = true;
    for (const auto& [k, v] : t_.metadata) {
      if (!first) buf_ += ',';
      first = false;
      jt::append_string(buf_, k);
      buf_ += ':';
      jt::append_string(buf_, v);
    }
    buf_ += "},\"steps\":[";
    for (size_t i = 0; i < t_.steps.size(); ++i) {
      if (i > 0) buf_ += ',';
      buf_ += "{\"begin_ns\":";
      jt::append_int(buf_, t_.steps[i].begin_ns);
      buf_ += ",\"end_ns\":";
      jt::append_int(buf_, t_.steps[i].end_ns);
      buf_ += '}';
    }
    buf_ += "]}";
  }

  void int_member(std::string_view k, int64_t v) {
    key(k);
    jt::append_int(buf_, v);
  }
  void string_member(std::string_view k, std::string_view v) {
    key(k);
    jt::append_string(buf_, v);
  }

  // Timeline::run as "meshscope_run" (layout in chrome_export.h); left out when nothing is known.
  void run_descriptor() {
    const RunDescriptor& r = t_.run;
    if (r == RunDescriptor{}) return;
    buf_ += ",\n\"meshscope_run\":{";
    string_member("source", name(r.source));
    buf_ += ',';
    string_member("backend", r.backend);
    buf_ += ",\"mesh\":{";
    int_member("dp", r.mesh.dp);
    buf_ += ',';
    int_member("pp", r.mesh.pp);
    buf_ += ',';
    int_member("tp", r.mesh.tp);
    buf_ += "},";
    string_member("family", r.family);
    buf_ += ',';
    string_member("schedule", r.schedule);
    buf_ += ',';
    int_member("microbatches", r.microbatches);
    buf_ += ',';
    int_member("stages", r.stages);
    buf_ += ',';
    int_member("virtual_stages", r.virtual_stages);
    buf_ += ",\"workload\":{";
    const WorkloadDescriptor& w = r.workload;
    string_member("kind", name(w.kind));
    for (const auto& [k, v] :
         {std::pair{"layers", w.layers}, std::pair{"hidden", w.hidden}, std::pair{"heads", w.heads},
          std::pair{"seq", w.seq}, std::pair{"vocab", w.vocab}, std::pair{"image", w.image},
          std::pair{"batch", w.batch}, std::pair{"experts", w.experts}, std::pair{"top_k", w.top_k},
          std::pair{"ep", w.ep}}) {
      buf_ += ',';
      int_member(k, v);
    }
    buf_ += ',';
    key("capacity_factor");
    jt::append_double(buf_, w.capacity_factor);
    buf_ += "},";
    string_member("hardware", r.hardware);
    buf_ += ',';
    int_member("cores", r.cores);
    buf_ += ',';
    string_member("gpu", r.gpu);
    buf_ += ',';
    string_member("process_group_backend", r.process_group_backend);
    buf_ += ',';
    key("replicas_simulated_once");
    buf_ += r.replicas_simulated_once ? "true" : "false";
    buf_ += ',';
    string_member("sim_config", r.sim_config);
    buf_ += '}';
  }

  // Kineto's per-rank facts, for tools that read one file per rank, spaced as Kineto writes them:
  // HolisticTraceAnalysis finds the rank with the pattern "rank":\s+(\d+) (hta/common/
  // trace_file.py), which takes a file without the space for rank 0.
  void distributed_info() {
    const auto rank = one_rank(t_);
    if (!rank) return;
    buf_ += ",\n\"distributedInfo\": {\"rank\": ";
    jt::append_int(buf_, rank->rank);
    if (rank->world_size) {
      buf_ += ", \"world_size\": ";
      jt::append_int(buf_, *rank->world_size);
    }
    buf_ += '}';
  }

  void metadata_event(std::string_view name, size_t pid, size_t tid) {
    begin_event();
    buf_ += "\"ph\":\"M\",\"name\":\"";
    buf_ += name;
    buf_ += '"';
    pid_tid(pid, tid);
    buf_ += ",\"args\":{";
  }

  void device_metadata(size_t d) {
    const Device& dev = t_.devices[d];
    metadata_event("process_name", d, 0);
    key("name");
    jt::append_string(buf_, dev.name);
    for (const auto& [k, v] : {std::pair{"rank", dev.rank}, std::pair{"dp", dev.coord.dp},
                               std::pair{"pp", dev.coord.pp}, std::pair{"tp", dev.coord.tp}}) {
      buf_ += ',';
      key(k);
      jt::append_int(buf_, v);
    }
    buf_ += '}';
    end_event();
    metadata_event("process_sort_index", d, 0);
    key("sort_index");
    jt::append_int(buf_, sort_position(d));
    buf_ += '}';
    end_event();
    for (size_t l = 0; l < dev.lanes.size(); ++l)
      thread_metadata(d, l, dev.lanes[l].name, l, false);
    // Threads for slices that do not nest on their lane's (chrome_threads.h), after the lanes.
    for (size_t j = 0; j < threads_.extra[d].size(); ++j) {
      const ExtraThread& e = threads_.extra[d][j];
      thread_metadata(d, dev.lanes.size() + j,
                      dev.lanes[e.lane].name + " (overlapping " + std::to_string(e.k) + ")", e.lane,
                      true);
    }
  }

  // Thread tid of device d (written tid + 1, pid_tid): its name, the kind of `lane` and, for an
  // extra thread holding that lane's overlapping slices, the lane's tid (the importer folds the
  // thread back into it); then its sort index.
  void thread_metadata(size_t d, size_t tid, const std::string& thread_name, size_t lane,
                       bool extra) {
    metadata_event("thread_name", d, tid);
    key("name");
    jt::append_string(buf_, thread_name);
    buf_ += ",\"lane_kind\":";
    jt::append_string(buf_, name(t_.devices[d].lanes[lane].kind));
    if (extra) {
      buf_ += ",\"lane\":";
      jt::append_int(buf_, static_cast<int64_t>(lane) + 1);  // the lane's tid (pid_tid)
    }
    buf_ += '}';
    end_event();
    metadata_event("thread_sort_index", d, tid);
    key("sort_index");
    jt::append_int(buf_, static_cast<int64_t>(tid));
    buf_ += '}';
    end_event();
  }

  // Position of device d when devices are ordered by (rank, index).
  int64_t sort_position(size_t d) {
    if (rank_order_.empty() && !t_.devices.empty()) {
      std::vector<size_t> order(t_.devices.size());
      std::iota(order.begin(), order.end(), size_t{0});
      std::stable_sort(order.begin(), order.end(),
                       [&](size_t a, size_t b) { return t_.devices[a].rank < t_.devices[b].rank; });
      rank_order_.resize(order.size());
      for (size_t i = 0; i < order.size(); ++i) rank_order_[order[i]] = static_cast<int64_t>(i);
    }
    return rank_order_[d];
  }

  void check_span(size_t i) const {
    const Span& s = t_.spans[i];
    const auto where = [&] { return "timeline: span " + std::to_string(i) + " "; };
    if (s.device >= t_.devices.size()) {
      throw std::invalid_argument(where() + "names device " + std::to_string(s.device) +
                                  ", but there are " + std::to_string(t_.devices.size()));
    }
    if (s.lane >= t_.devices[s.device].lanes.size()) {
      throw std::invalid_argument(where() + "names lane " + std::to_string(s.lane) + " of device " +
                                  std::to_string(s.device) + ", which has " +
                                  std::to_string(t_.devices[s.device].lanes.size()));
    }
    if (s.end_ns < s.begin_ns) {
      throw std::invalid_argument(where() + "ends before it begins (" + std::to_string(s.begin_ns) +
                                  " > " + std::to_string(s.end_ns) + " ns)");
    }
    if (s.name >= names_.size()) {
      throw std::invalid_argument(where() + "names string " + std::to_string(s.name) +
                                  ", past the string table");
    }
  }

  void span_event(size_t i) {
    check_span(i);
    const Span& s = t_.spans[i];
    begin_event();
    const Lane& lane = t_.devices[s.device].lanes[s.lane];
    const SpanOrigin* origin = origin_at(i);
    buf_ += "\"ph\":\"X\",\"cat\":";
    if (origin != nullptr && origin->category != 0 && origin->category < names_.size()) {
      buf_ += names_[origin->category];  // the category the event had in its source file
    } else {
      buf_ += '"';
      buf_ += kineto_category(s.kind, lane.kind, t_.strings.get(s.name));
      buf_ += '"';
    }
    buf_ += ",\"name\":";
    buf_ += names_[s.name];
    pid_tid(s.device, threads_.tid_of(static_cast<uint32_t>(i), s.lane));
    buf_ += ",\"ts\":";
    jt::append_us(buf_, s.begin_ns);
    buf_ += ",\"dur\":";
    jt::append_us(buf_, s.end_ns - s.begin_ns);
    span_args(i, s, lane, origin);
    end_event();
  }

  // The origin of span i: spans are written in order and origins are sorted by span, so a cursor
  // finds each in constant time.
  const SpanOrigin* origin_at(size_t i) {
    const auto& origins = t_.origins;
    while (origin_cursor_ < origins.size() && origins[origin_cursor_].span < i) ++origin_cursor_;
    if (origin_cursor_ < origins.size() && origins[origin_cursor_].span == i) {
      return &origins[origin_cursor_];
    }
    return nullptr;
  }

  void span_args(size_t i, const Span& s, const Lane& lane, const SpanOrigin* origin) {
    buf_ += ",\"args\":{\"kind\":\"";
    buf_ += name(s.kind);
    buf_ += '"';
    const auto sep = [&] { buf_ += ','; };
    const std::string_view origin_args = origin != nullptr && origin->args < t_.origin_args.size()
                                             ? t_.origin_args.get(origin->args)
                                             : std::string_view{};
    // An imported event's own args (kept in origin_args) carry its device where it had one.
    if (has_kineto_stream(s.kind) && origin_args.empty()) {
      sep();
      key("device");
      jt::append_int(buf_, s.device);
    }
    if (origin != nullptr && origin->stream != SpanOrigin::kNoStream) {
      sep();
      key("stream");
      jt::append_int(buf_, origin->stream);
    } else if (has_kineto_stream(s.kind) && origin == nullptr) {
      // An imported event without a stream (a CPU op that became a CPU rank's compute) gets
      // none: HTA takes every event with a stream for a GPU kernel.
      sep();
      key("stream");
      jt::append_int(buf_, kineto_stream(lane, s.lane));
    }
    if (origin != nullptr && origin->correlation != SpanOrigin::kNoCorrelation) {
      sep();
      key("correlation");
      jt::append_int(buf_, origin->correlation);
    } else if (const auto c = correlation_.find(static_cast<uint32_t>(i));
               c != correlation_.end()) {
      sep();
      key("correlation");
      jt::append_int(buf_, c->second);
    }
    if (s.stage != -1) {
      sep();
      key("stage");
      jt::append_int(buf_, s.stage);
    }
    if (s.microbatch != -1) {
      sep();
      key("microbatch");
      jt::append_int(buf_, s.microbatch);
    }
    if (s.phase != Phase::kNone) {
      sep();
      key("phase");
      buf_ += '"';
      buf_ += name(s.phase);
      buf_ += '"';
    }
    if (s.bytes != 0) {
      sep();
      key("bytes");
      jt::append_int(buf_, s.bytes);
    }
    if (s.flops != 0 && std::isfinite(s.flops)) {
      sep();
      key("flops");
      jt::append_double(buf_, s.flops);
    }
    // Spans are written in order and collectives are sorted by span: one cursor walks both.
    while (next_collective_ < t_.collectives.size() && t_.collectives[next_collective_].span < i)
      ++next_collective_;
    if (next_collective_ < t_.collectives.size() && t_.collectives[next_collective_].span == i) {
      const Collective& c = t_.collectives[next_collective_].collective;
      sep();
      string_member("collective_op", name(c.op));
      sep();
      string_member("collective_group", name(c.group));
      sep();
      int_member("collective_bytes", c.bytes);
      if (c.ranks > 0) {
        sep();
        int_member("collective_ranks", c.ranks);
      }
      if (c.first_rank >= 0) {
        sep();
        int_member("collective_first_rank", c.first_rank);
        sep();
        int_member("collective_rank_stride", c.rank_stride);
      }
      sep();
      string_member("collective_algorithm", name(c.algorithm));
    }
    while (next_wait_ < t_.waits.size() && t_.waits[next_wait_].span < i) ++next_wait_;
    if (next_wait_ < t_.waits.size() && t_.waits[next_wait_].span == i) {
      sep();
      int_member("waited_ns", t_.waits[next_wait_].wait_ns);
    }
    if (!origin_args.empty()) {
      sep();
      buf_ += origin_args;  // JSON members as read from the source file
    }
    buf_ += '}';
  }

  static constexpr std::string_view kLaunchFlow = "ac2g";
  // The flow's category as imported, else one named by the kinds of its spans.
  static std::string_view flow_name(const Timeline& t, const Flow& f) {
    if (f.category != 0 && f.category < t.strings.size()) return t.strings.get(f.category);
    const Span& from = t.spans[f.from];
    const Span& to = t.spans[f.to];
    if (from.kind == SpanKind::kHost && is_device_activity(to.kind)) return kLaunchFlow;
    if (from.kind == SpanKind::kSend && to.kind == SpanKind::kRecv) return "p2p";
    return "flow";
  }

  void flow_end(char ph, std::string_view name, size_t id, uint32_t span, int64_t ts_ns) {
    const Span& s = t_.spans[span];
    begin_event();
    buf_ += "\"ph\":\"";
    buf_ += ph;
    buf_ += "\",\"cat\":\"";
    buf_ += name;
    buf_ += "\",\"name\":\"";
    buf_ += name;
    buf_ += "\",\"id\":";
    jt::append_int(buf_, static_cast<int64_t>(id));
    pid_tid(s.device, threads_.tid_of(span, s.lane));
    buf_ += ",\"ts\":";
    jt::append_us(buf_, ts_ns);
    buf_ += ",\"bp\":\"e\",\"args\":{\"span\":";
    jt::append_int(buf_, span);
    buf_ += "}";
    end_event();
  }

  void flow_events(size_t i) {
    const Flow& f = t_.flows[i];
    if (f.from >= t_.spans.size() || f.to >= t_.spans.size()) {
      throw std::invalid_argument(
          "timeline: flow " + std::to_string(i) + " (" + std::to_string(f.from) + " -> " +
          std::to_string(f.to) + ") points past the " + std::to_string(t_.spans.size()) + " spans");
    }
    const std::string_view n = flow_name(t_, f);
    const Span& from = t_.spans[f.from];
    const Span& to = t_.spans[f.to];
    flow_end('s', n, i, f.from, from.begin_ns);
    // Perfetto drops a flow whose end comes before its start, so a recv posted before its send
    // began has its end at the send's begin, inside the recv (at its end when the send began
    // later still).
    flow_end('f', n, i, f.to, std::clamp(from.begin_ns, to.begin_ns, to.end_ns));
  }

  void counter_events(const Counter& c) {
    if (c.device >= t_.devices.size()) {
      throw std::invalid_argument("timeline: counter '" + c.name + "' names device " +
                                  std::to_string(c.device) + ", but there are " +
                                  std::to_string(t_.devices.size()));
    }
    std::string escaped;
    jt::append_string(escaped, c.name);
    for (const CounterSample& s : c.samples) {
      if (!std::isfinite(s.value)) continue;
      begin_event();
      buf_ += "\"ph\":\"C\",\"name\":";
      buf_ += escaped;
      buf_ += ",\"pid\":";
      jt::append_int(buf_, c.device);
      buf_ += ",\"ts\":";
      jt::append_us(buf_, s.t_ns);
      buf_ += ",\"args\":{\"value\":";
      jt::append_double(buf_, s.value);
      buf_ += '}';
      end_event();
    }
  }

  const Timeline& t_;
  const std::function<void(std::string_view)>& sink_;
  std::string buf_;
  std::vector<std::string> names_;
  std::vector<int64_t> rank_order_;
  ThreadPlan threads_;                                 // the thread of each span (chrome_threads.h)
  std::unordered_map<uint32_t, int64_t> correlation_;  // span -> its launch flow's id
  size_t next_collective_ = 0;                         // cursor into Timeline::collectives
  size_t next_wait_ = 0;                               // cursor into Timeline::waits
  size_t origin_cursor_ = 0;
  bool first_event_ = true;
};

}  // namespace

void write_chrome_trace(const Timeline& t, const std::function<void(std::string_view)>& sink) {
  ChromeWriter(t, sink).write();
}

void write_chrome_trace(const Timeline& t, const std::filesystem::path& path) {
  AtomicFile out(path);
  write_chrome_trace(t, out);
  out.commit();
}

void write_chrome_trace(const Timeline& t, AtomicFile& out) {
  if (!is_gzip_path(out.target())) {
    write_chrome_trace(t, [&](std::string_view chunk) { out.write(chunk); });
    return;
  }
  // A *.json.gz name is written compressed (it had been plain JSON under a gzip name).
  GzipWriter gz(out);
  write_chrome_trace(t, [&](std::string_view chunk) { gz.write(chunk); });
  gz.finish();
}

int64_t estimated_chrome_bytes(const Timeline& t) {
  int64_t samples = 0;
  for (const Counter& c : t.counters) samples += static_cast<int64_t>(c.samples.size());
  int64_t tracks = 0;  // devices and lanes: each a name and a sort index
  for (const Device& d : t.devices) tracks += 1 + static_cast<int64_t>(d.lanes.size());
  return 2000 + 180 * tracks + 200 * static_cast<int64_t>(t.spans.size()) +
         225 * static_cast<int64_t>(t.flows.size()) + 92 * samples;
}

std::string export_chrome_json(const Timeline& t) {
  std::string out;
  write_chrome_trace(t, [&](std::string_view chunk) { out.append(chunk); });
  return out;
}

std::string format_chrome_us(int64_t ns) {
  std::string out;
  json_text::append_us(out, ns);
  return out;
}

}  // namespace meshscope::traces
