// The second half of the Chrome builder: top-level members, then, once every event is read,
// device order and names, sorting, flow binding, steps and metadata.
#include <algorithm>
#include <numeric>

#include <nlohmann/json.hpp>

#include "traces/chrome_export.h"
#include "traces/chrome_export_text.h"
#include "traces/import/chrome_builder.h"
#include "traces/import/chrome_run_descriptor.h"
#include "traces/import/import_common.h"
#include "traces/printable.h"

namespace meshscope::traces::importer {
namespace {

constexpr uint32_t kNoSpan = UINT32_MAX;
// A flow end that binds to an enclosing slice climbs at most this many enclosing levels.
constexpr int kMaxEnclosingWalk = 4096;

bool id_less(const IdKey& a, const IdKey& b) {
  if (a.is_string != b.is_string) return !a.is_string;  // numbers first
  return a.value < b.value;
}

// torch's distributedInfo.pg_config: a list of {"pg_name", "pg_desc", "ranks", ...}, one per
// process group ("ranks" a list of global ranks, or a string of one in older torch). Written as
// "desc=r,r,...;desc=r,..." (metadata "process_groups"); groups without a list of ranks, or whose
// description would break that text, are left out.
std::string process_groups_of(std::string_view raw) {
  const auto info = nlohmann::json::parse(raw, nullptr, /*allow_exceptions=*/false);
  if (!info.is_object() || !info.contains("pg_config") || !info["pg_config"].is_array()) return "";
  std::string out;
  for (const auto& g : info["pg_config"]) {
    if (!g.is_object() || !g.contains("ranks") || !g["ranks"].is_array()) continue;
    std::string desc =
        g.contains("pg_desc") && g["pg_desc"].is_string()
            ? g["pg_desc"].get<std::string>()
            : (g.contains("pg_name") && g["pg_name"].is_string() ? g["pg_name"].get<std::string>()
                                                                 : std::string());
    if (desc.empty() || desc.find_first_of(";=,") != std::string::npos) continue;
    std::string ranks;
    bool ok = !g["ranks"].empty();
    for (const auto& r : g["ranks"]) {
      if (!r.is_number_integer()) ok = false;
      if (!ok) break;
      ranks += (ranks.empty() ? "" : ",") + std::to_string(r.get<int64_t>());
    }
    if (ok) out += (out.empty() ? "" : ";") + desc + "=" + ranks;
  }
  return out;
}

std::string trim(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

}  // namespace

void ChromeTimelineBuilder::on_member(const ChromeMember& m) {
  if (m.key == "meshscope") {
    if (saw_event_) {
      throw ImportError(file_, m.offset, "the meshscope header must come before traceEvents");
    }
    read_meshscope_header(m);
    mode_ = Mode::kMeshscope;
  } else if (m.key == "meshscope_run") {
    tl_.run = read_run_descriptor(m.raw, file_, m.offset, &run_facts_typed_);
  } else if (m.key == "distributedInfo") {
    // torch writes the process's rank and the job's size as whole numbers: anything else is no
    // rank (a rank of -1 had become a device "rank -1" beside "no trace of rank 2"; "2", a
    // string, was taken for no rank at all and the file's position used instead).
    const auto whole = [&](const char* key, int64_t least) -> std::optional<int64_t> {
      const JsonScalar* v = m.member(key);
      if (v == nullptr) return std::nullopt;
      int64_t x = 0;
      if (!v->is_number() || !number_text_to_int(v->text, x) || x < least ||
          x >= (int64_t{1} << 31))
        throw ImportError(
            file_, m.offset,
            std::string("distributedInfo.") + key + ": " +
                (v->is_string() ? "\"" + printable(v->text, 40) + "\" (a string)"
                                : printable(v->text, 40)) +
                " is no " +
                (least == 0 ? "rank (a whole number >= 0)" : "world size (a whole number >= 1)"));
      return x;
    };
    if (const std::optional<int64_t> x = whole("rank", 0)) rank_ = *x;
    if (const std::optional<int64_t> x = whole("world_size", 1)) world_size_ = *x;
    if (const JsonScalar* v = m.member("backend"); v != nullptr && v->is_string()) {
      backend_ = std::string(v->text);
    }
    process_groups_ = process_groups_of(m.raw);
  } else if (m.key == "baseTimeNanoseconds") {
    int64_t x = 0;
    if (m.value.is_number() && number_text_to_int(m.value.text, x)) {
      if (time_in_range(x)) {
        base_time_ns_ = x;
      } else {
        report_.warn(ImportWarning::kBadNumber, m.offset);
      }
    }
  } else if (m.key == "deviceProperties" && m.value.type == JsonType::kArray) {
    // Depth was bounded by the scanner already; NaN (which nlohmann refuses) just loses the name.
    const auto props = nlohmann::json::parse(m.raw, nullptr, /*allow_exceptions=*/false);
    if (props.is_array() && !props.empty() && props[0].is_object() && props[0].contains("name") &&
        props[0]["name"].is_string()) {
      gpu_model_ = props[0]["name"].get<std::string>();
    }
  }
}

void ChromeTimelineBuilder::read_meshscope_header(const ChromeMember& m) {
  const auto fail = [&](const std::string& why) {
    throw ImportError(file_, m.offset, "meshscope header: " + why);
  };
  nlohmann::json h;
  try {
    h = nlohmann::json::parse(m.raw);
  } catch (const nlohmann::json::exception& e) {
    // "[json.exception.parse_error.101] parse error at line 1, column 80: ..." without the tag;
    // a NaN in it had read "not a JSON object". Every exception of the parser, not only
    // parse_error: a number past a double (1e3080) is out_of_range.406 (found by the fuzzer).
    std::string why = e.what();
    if (const size_t tag = why.find("] "); why.starts_with("[json.exception") && tag != why.npos)
      why.erase(0, tag + 2);
    fail("not valid JSON: " + why);
  }
  if (!h.is_object()) fail("not a JSON object");
  if (!h.contains("version") || !h["version"].is_number_integer()) fail("no integer version");
  const auto version = h["version"].get<int64_t>();
  if (version > kChromeFormatVersion) {
    fail("format version " + std::to_string(version) + " is newer than this build reads (" +
         std::to_string(kChromeFormatVersion) + ")");
  }
  if (h.contains("metadata")) {
    if (!h["metadata"].is_object()) fail("metadata is not an object");
    for (const auto& [k, v] : h["metadata"].items()) {
      header_metadata_[k] = v.is_string() ? v.get<std::string>() : v.dump();
    }
  }
  if (h.contains("steps")) {
    if (!h["steps"].is_array()) fail("steps is not an array");
    for (const auto& s : h["steps"]) {
      if (!s.is_object() || !s.contains("begin_ns") || !s.contains("end_ns") ||
          !s["begin_ns"].is_number_integer() || !s["end_ns"].is_number_integer()) {
        fail("step " + std::to_string(header_steps_.size()) + " lacks integer begin_ns/end_ns");
      }
      // Unsigned values past int64 would wrap in get<int64_t>: refuse them with the rest.
      const auto too_big = [](const nlohmann::json& v) {
        return v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(kMaxTimeNs);
      };
      const StepWindow w{s["begin_ns"].get<int64_t>(), s["end_ns"].get<int64_t>()};
      if (too_big(s["begin_ns"]) || too_big(s["end_ns"]) || !time_in_range(w.begin_ns) ||
          !time_in_range(w.end_ns)) {
        fail("step " + std::to_string(header_steps_.size()) + " lies beyond ±" +
             std::to_string(kMaxTimeNs) + " ns");
      }
      if (w.end_ns < w.begin_ns) {
        fail("step " + std::to_string(header_steps_.size()) + " ends (" + std::to_string(w.end_ns) +
             " ns) before it begins (" + std::to_string(w.begin_ns) + " ns)");
      }
      header_steps_.push_back(w);
    }
  }
}

Timeline ChromeTimelineBuilder::finish(const ChromeReadSummary& summary) {
  if (summary.object_form && !summary.has_trace_events) {
    throw ImportError(file_, "", "not a Chrome trace: the top-level object has no traceEvents");
  }
  for (const ThreadSlot& slot : slots_) {
    if (!slot.open.empty()) {
      report_.warn_at(ImportWarning::kUnmatchedBeginEnd, "end of file", slot.open.size());
    }
  }
  resolve_send_recv();
  counters_onto_gpus();
  build_devices();
  // Correlation flows go in before sorting (which remaps them) and give way to flow events after.
  const size_t correlation_flows = add_correlation_flows(tl_, correlation_ends_);
  for (const CorrelationEnd& e : correlation_ends_) {
    const auto call = e.gpu ? dropped_call_at_.find(e.correlation) : dropped_call_at_.end();
    if (call == dropped_call_at_.end()) continue;
    const Span& s = tl_.spans[e.span];
    dropped_launches_.push_back({call->second, s.begin_ns, s.end_ns, s.name});
  }
  if (mode_ != Mode::kMeshscope) tl_.sort_spans();  // meshscope keeps span order: flows use it
  bind_flows();
  drop_redundant_correlation_flows(tl_, correlation_flows);
  build_steps();
  mark_comm_lanes(tl_, is_gpu_);
  fill_metadata(summary);
  report_.spans_kept = tl_.spans.size();
  return std::move(tl_);
}

void ChromeTimelineBuilder::resolve_send_recv() {
  for (const auto& [span, external_id] : send_recv_) {
    const auto it = comm_op_of_external_id_.find(external_id);
    if (it != comm_op_of_external_id_.end() && it->second != CommOp::kSendRecv) {
      tl_.spans[span].kind = span_kind_of(it->second);
    } else {
      report_.warn_at(ImportWarning::kSendRecvDirection,
                      "span \"" + std::string(tl_.span_name(tl_.spans[span])) + "\"");
    }
  }
}

void ChromeTimelineBuilder::counters_onto_gpus() {
  // Kineto's GPU pid is its device id: a counter there ("GPU Memory") is the GPU's, where the
  // spans are, not a process of its own that holds none (which would be dropped with it).
  std::vector<bool> has_spans(devices_.size(), false);
  for (const Span& s : tl_.spans) has_spans[s.device] = true;
  for (Counter& c : tl_.counters) {
    const DeviceRec& d = devices_[c.device];
    if (d.cls != DeviceClass::kProcess || has_spans[c.device]) continue;
    const auto gpu = device_of_.find(DeviceKey{DeviceClass::kGpu, d.key});
    if (gpu != device_of_.end()) c.device = gpu->second;
  }
}

void ChromeTimelineBuilder::build_devices() {
  const bool meshscope = mode_ == Mode::kMeshscope;
  std::vector<uint16_t> order(devices_.size());
  std::iota(order.begin(), order.end(), uint16_t{0});
  const auto sort_key = [&](const DeviceRec& d) {
    const auto it = process_meta_.find(d.key);
    const bool has_index = !meshscope && d.cls == DeviceClass::kProcess &&
                           it != process_meta_.end() && it->second.sort_index;
    return std::pair{d.cls == DeviceClass::kGpu ? 0 : 1,
                     has_index ? *it->second.sort_index : int64_t{0}};
  };
  std::stable_sort(order.begin(), order.end(), [&](uint16_t a, uint16_t b) {
    const auto ka = sort_key(devices_[a]);
    const auto kb = sort_key(devices_[b]);
    if (ka != kb) return ka < kb;
    return id_less(devices_[a].key, devices_[b].key);
  });

  const auto id_text = [&](const IdKey& k) {
    return k.is_string ? id_string_list_[static_cast<size_t>(k.value)] : std::to_string(k.value);
  };
  const std::string rank_prefix = rank_ ? "rank " + std::to_string(*rank_) + " · " : "";
  const auto hosts = std::count_if(devices_.begin(), devices_.end(), [](const DeviceRec& d) {
    return d.cls == DeviceClass::kProcess;
  });

  std::vector<uint16_t> device_map(devices_.size());
  std::vector<std::vector<uint16_t>> lane_map(devices_.size());
  is_gpu_.assign(devices_.size(), false);
  for (uint16_t temp : order) {
    const DeviceRec& d = devices_[temp];
    const auto meta_it = process_meta_.find(d.key);
    const ProcessMeta* meta = (d.cls == DeviceClass::kProcess && meta_it != process_meta_.end())
                                  ? &meta_it->second
                                  : nullptr;
    std::string name;
    int rank = static_cast<int>(rank_.value_or(0));
    MeshCoord coord;
    if (d.cls == DeviceClass::kGpu) {
      name = rank_prefix + "GPU " + id_text(d.key);
      if (!rank_ && !d.key.is_string) rank = static_cast<int>(d.key.value);
    } else if (meshscope) {
      name = meta && !meta->name.empty() ? meta->name : "device " + id_text(d.key);
      if (meta) {
        rank = static_cast<int>(meta->rank.value_or(0));
        coord = MeshCoord{static_cast<int>(meta->dp.value_or(-1)),
                          static_cast<int>(meta->pp.value_or(-1)),
                          static_cast<int>(meta->tp.value_or(-1))};
      }
    } else if (saw_kineto_) {
      name = rank_prefix + (hosts > 1 ? "host pid " + id_text(d.key) : std::string("host"));
    } else {
      name = meta && !meta->name.empty() ? meta->name + " (pid " + id_text(d.key) + ")"
                                         : "pid " + id_text(d.key);
    }
    const uint16_t final_index = tl_.add_device(rank, name, coord);
    device_map[temp] = final_index;
    is_gpu_[final_index] = d.cls == DeviceClass::kGpu;

    // Lanes: streams by id; threads by their sort index, then id.
    std::vector<uint16_t> lanes(d.lanes.size());
    std::iota(lanes.begin(), lanes.end(), uint16_t{0});
    const auto thread_meta = [&](const IdKey& tid) -> const ThreadMeta* {
      const auto it = thread_meta_.find(ThreadKey{d.key, tid});
      return it == thread_meta_.end() ? nullptr : &it->second;
    };
    std::stable_sort(lanes.begin(), lanes.end(), [&](uint16_t a, uint16_t b) {
      if (d.cls == DeviceClass::kProcess && !meshscope) {
        const ThreadMeta* ma = thread_meta(d.lanes[a]);
        const ThreadMeta* mb = thread_meta(d.lanes[b]);
        const int64_t sa = ma && ma->sort_index ? *ma->sort_index : d.lanes[a].value;
        const int64_t sb = mb && mb->sort_index ? *mb->sort_index : d.lanes[b].value;
        if (sa != sb) return sa < sb;
      }
      return id_less(d.lanes[a], d.lanes[b]);
    });
    lane_map[temp].resize(d.lanes.size());
    for (uint16_t l : lanes) {
      const ThreadMeta* m = d.cls == DeviceClass::kProcess ? thread_meta(d.lanes[l]) : nullptr;
      std::string lane_name;
      LaneKind kind = LaneKind::kHost;
      if (d.cls == DeviceClass::kGpu) {
        lane_name = "stream " + id_text(d.lanes[l]);
        kind = LaneKind::kCompute;
      } else if (meshscope) {
        lane_name = m ? m->name : "lane " + id_text(d.lanes[l]);
        kind = m && m->kind ? *m->kind : LaneKind::kCompute;
      } else {
        lane_name = m && !m->name.empty() ? trim(m->name) : "thread " + id_text(d.lanes[l]);
      }
      lane_map[temp][l] = tl_.add_lane(final_index, lane_name, kind);
    }
  }
  for (Span& s : tl_.spans) {
    s.lane = lane_map[s.device][s.lane];
    s.device = device_map[s.device];
  }
  for (ThreadSlot& slot : slots_) {
    slot.lane = lane_map[slot.device][slot.lane];
    slot.device = device_map[slot.device];
  }
  for (Counter& c : tl_.counters) c.device = device_map[c.device];
}

void ChromeTimelineBuilder::bind_flows() {
  if (flow_ends_.empty()) return;
  // Spans of each lane in (begin, end descending) order, found by lane through `first`.
  std::vector<uint32_t> order(tl_.spans.size());
  std::iota(order.begin(), order.end(), 0u);
  const auto before = [&](uint32_t a, uint32_t b) {
    return canonical_before(tl_.spans[a], tl_.spans[b]);
  };
  if (!std::is_sorted(order.begin(), order.end(), before)) {
    std::stable_sort(order.begin(), order.end(), before);
  }
  // Where each lane's spans sit in `order`: lane_first[device][lane] .. the next lane's first.
  std::vector<std::vector<uint32_t>> lane_first(tl_.devices.size());
  for (size_t d = 0; d < tl_.devices.size(); ++d) {
    lane_first[d].assign(tl_.devices[d].lanes.size() + 1, 0);
  }
  {
    size_t i = 0;
    for (size_t d = 0; d < tl_.devices.size(); ++d) {
      for (size_t l = 0; l <= tl_.devices[d].lanes.size(); ++l) {
        while (i < order.size() &&
               std::pair<size_t, size_t>{tl_.spans[order[i]].device, tl_.spans[order[i]].lane} <
                   std::pair{d, l}) {
          ++i;
        }
        lane_first[d][l] = static_cast<uint32_t>(i);
      }
    }
  }
  // parent[k]: the position in `order` of the slice that encloses the one at k (kNoSpan: none),
  // from one stack sweep per lane; an enclosing slice of ts is the latest slice to begin before
  // ts or one of its ancestors.
  std::vector<uint32_t> parent(order.size(), kNoSpan);
  {
    std::vector<uint32_t> open;
    for (uint32_t k = 0; k < order.size(); ++k) {
      const Span& s = tl_.spans[order[k]];
      if (k > 0) {
        const Span& prev = tl_.spans[order[k - 1]];
        if (prev.device != s.device || prev.lane != s.lane) open.clear();
      }
      while (!open.empty() && tl_.spans[order[open.back()]].end_ns < s.end_ns) open.pop_back();
      parent[k] = open.empty() ? kNoSpan : open.back();
      open.push_back(k);
    }
  }
  const auto lane_range = [&](uint16_t device, uint16_t lane) {
    return std::pair{order.begin() + lane_first[device][lane],
                     order.begin() + lane_first[device][lane + 1u]};
  };
  // Climbing is linear in the ends overall, whatever the nesting a hostile file builds.
  int64_t walk_budget = (int64_t{1} << 24) + 64 * static_cast<int64_t>(flow_ends_.size());
  const auto bind = [&](const FlowEnd& e) -> uint32_t {
    if (e.span >= 0) {
      return e.span < static_cast<int64_t>(x_event_span_.size())
                 ? x_event_span_[static_cast<size_t>(e.span)]
                 : kNoSpan;
    }
    const auto slot = slot_of_.find(e.thread);
    if (slot == slot_of_.end()) return kNoSpan;
    const auto [lo, hi] = lane_range(slots_[slot->second].device, slots_[slot->second].lane);
    if (!e.enclosing) {  // the next slice that begins at or after ts
      const auto it = std::lower_bound(
          lo, hi, e.ts_ns, [&](uint32_t i, int64_t t) { return tl_.spans[i].begin_ns < t; });
      return it == hi ? kNoSpan : *it;
    }
    const auto it = std::upper_bound(
        lo, hi, e.ts_ns, [&](int64_t t, uint32_t i) { return t < tl_.spans[i].begin_ns; });
    if (it == lo) return kNoSpan;
    // The latest slice to begin, else the first of its enclosing slices that still runs at ts.
    auto at = static_cast<uint32_t>(it - order.begin() - 1);
    for (int walked = 0;
         at != kNoSpan && walked < kMaxEnclosingWalk && (walked == 0 || walk_budget > 0);
         ++walked, --walk_budget) {
      if (tl_.spans[order[at]].end_ns >= e.ts_ns) return order[at];
      at = parent[at];
    }
    return kNoSpan;
  };

  // Pair the ends of each (category, id) in time order: s, then any t steps, then f. meshscope's
  // own flows have one s and one f per id and may point back in time (a recv that began before
  // its send, an enclosing slice), so there the phase orders them, not the time.
  std::vector<uint32_t> ends(flow_ends_.size());
  std::iota(ends.begin(), ends.end(), 0u);
  const auto phase_rank = [](char ph) { return ph == 's' ? 0 : ph == 't' ? 1 : 2; };
  const bool by_phase = mode_ == Mode::kMeshscope;
  std::stable_sort(ends.begin(), ends.end(), [&](uint32_t a, uint32_t b) {
    const FlowEnd& x = flow_ends_[a];
    const FlowEnd& y = flow_ends_[b];
    if (x.cat != y.cat) return x.cat < y.cat;
    if (x.id != y.id) return id_less(x.id, y.id);
    if (by_phase && x.ph != y.ph) return phase_rank(x.ph) < phase_rank(y.ph);
    if (x.ts_ns != y.ts_ns) return x.ts_ns < y.ts_ns;
    return phase_rank(x.ph) < phase_rank(y.ph);
  });
  struct Bound {
    int64_t order;  // file offset of the finishing end: flows keep the file's order
    uint32_t from, to, category;
  };
  std::vector<Bound> bound;
  const FlowEnd* open = nullptr;
  const auto same_flow = [](const FlowEnd& a, const FlowEnd& b) {
    return a.cat == b.cat && a.id == b.id;
  };
  const auto connect = [&](const FlowEnd& from, const FlowEnd& to) {
    const uint32_t a = bind(from);
    const uint32_t b = bind(to);
    if (a == kNoSpan || b == kNoSpan) {
      report_.warn(ImportWarning::kFlowWithoutSpan, (a == kNoSpan ? from : to).offset);
    } else {
      bound.push_back({to.offset, a, b, from.category});
    }
  };
  for (uint32_t i : ends) {
    const FlowEnd& e = flow_ends_[i];
    if (open != nullptr && !same_flow(*open, e)) {
      report_.warn(ImportWarning::kUnpairedFlow, open->offset);
      open = nullptr;
    }
    if (e.ph == 's') {
      if (open != nullptr) report_.warn(ImportWarning::kUnpairedFlow, open->offset);
      open = &e;
    } else if (open == nullptr) {
      report_.warn(ImportWarning::kUnpairedFlow, e.offset);
    } else {
      connect(*open, e);
      open = e.ph == 't' ? &e : nullptr;
    }
  }
  if (open != nullptr) report_.warn(ImportWarning::kUnpairedFlow, open->offset);
  std::stable_sort(bound.begin(), bound.end(),
                   [](const Bound& a, const Bound& b) { return a.order < b.order; });
  tl_.flows.reserve(tl_.flows.size() + bound.size());
  for (const Bound& b : bound) tl_.add_flow(b.from, b.to, b.category);
  std::vector<FlowEnd>().swap(flow_ends_);
}

void ChromeTimelineBuilder::build_steps() {
  if (mode_ == Mode::kMeshscope) {
    tl_.steps = header_steps_;
    return;
  }
  for (const auto& [n, window] : profiler_steps_) tl_.steps.push_back(window);
  // A step also covers the device work it launched: GPU activity runs behind the host.
  extend_steps_by_launches(tl_, report_, dropped_launches_);
}

void ChromeTimelineBuilder::fill_metadata(const ChromeReadSummary& summary) {
  (void)summary;
  if (mode_ == Mode::kMeshscope) {
    tl_.metadata = header_metadata_;
    if (!run_facts_typed_) read_run_from_old_metadata(tl_.metadata, tl_.run);
  } else {
    tl_.metadata["source"] = saw_kineto_ ? "kineto" : "chrome";
    if (tl_.run.source == RunSource::kUnknown)
      tl_.run.source = saw_kineto_ ? RunSource::kKineto : RunSource::kChrome;
    tl_.metadata["trace_file"] = json_text::valid_utf8(file_);  // a path need not be UTF-8
    if (rank_) tl_.metadata["rank"] = std::to_string(*rank_);
    if (world_size_) tl_.metadata["world_size"] = std::to_string(*world_size_);
    if (base_time_ns_) tl_.metadata["base_time_ns"] = std::to_string(*base_time_ns_);
    if (!backend_.empty()) tl_.metadata["backend"] = backend_;
    if (!process_groups_.empty()) tl_.metadata["process_groups"] = process_groups_;
    if (!gpu_model_.empty()) tl_.metadata["gpu"] = gpu_model_;
    tl_.run.process_group_backend = backend_;
    tl_.run.gpu = gpu_model_;
  }
  note_warnings(tl_, report_);
}

}  // namespace meshscope::traces::importer
