// Trace events other than complete ones -> spans (B/E pairs), flow ends, metadata and counters
// (chrome_builder.cpp reads X events; chrome_builder_finish.cpp completes the Timeline).
#include <algorithm>

#include "traces/import/chrome_args.h"
#include "traces/import/chrome_builder.h"

namespace meshscope::traces::importer {

void ChromeTimelineBuilder::begin_event(const ChromeEvent& ev) {
  Span s;
  if (!read_time(ev, ev.ts, s.begin_ns)) return;
  const Placed p = place(ev);
  if (p.skip) return;
  if (p.host && !options_.keep_host) {
    report_.warn(ImportWarning::kHostDropped, ev.offset);
    note_dropped_call(ev, s.begin_ns);
    return;
  }
  // Built now (the args come with B), added when the matching E closes it.
  emit_span(ev, p, s, /*open_only=*/true);
}

void ChromeTimelineBuilder::end_event(const ChromeEvent& ev) {
  int64_t end_ns = 0;
  if (!read_time(ev, ev.ts, end_ns)) return;
  const auto it =
      ev.pid.present() ? slot_of_.find(ThreadKey{id_key(ev.pid), id_key(ev.tid)}) : slot_of_.end();
  if (it == slot_of_.end() || slots_[it->second].open.empty()) {
    report_.warn(ImportWarning::kUnmatchedBeginEnd, ev.offset);
    return;
  }
  ThreadSlot& slot = slots_[it->second];
  Span s = slot.open.back();
  slot.open.pop_back();
  std::optional<SpanOrigin> origin;
  if (!slot.open_origins.empty()) {
    origin = slot.open_origins.back();
    slot.open_origins.pop_back();
  }
  if (end_ns < s.begin_ns) {
    report_.warn(ImportWarning::kNegativeDuration, ev.offset);
    return;
  }
  s.end_ns = end_ns;
  if (mode_ == Mode::kKineto)
    note_profiler_step(tl_.strings.get(s.name), s.begin_ns, s.end_ns, ev.offset);
  const uint32_t index = tl_.add_span(s);
  if (origin) {
    origin->span = index;
    tl_.origins.push_back(*origin);
  }
}

void ChromeTimelineBuilder::flow_event(const ChromeEvent& ev, char ph) {
  FlowEnd fe;
  fe.ph = ph;
  fe.offset = ev.offset;
  if (!ev.pid.present() || !ev.id.present()) {
    report_.warn(ImportWarning::kMissingField, ev.offset);
    return;
  }
  if (!read_time(ev, ev.ts, fe.ts_ns)) return;
  fe.thread = ThreadKey{id_key(ev.pid), id_key(ev.tid)};
  fe.id = id_key(ev.id);
  fe.cat = static_cast<uint32_t>(id_key(JsonScalar{JsonType::kString, as_text(ev.cat)}).value);
  if (options_.keep_origins && ev.cat.is_string()) fe.category = tl_.strings.intern(ev.cat.text);
  fe.enclosing = ph != 'f' || (ev.bp.is_string() && ev.bp.text == "e");
  if (mode_ == Mode::kMeshscope) {
    const ArgView a = scan_args(ev);
    if (const auto span = as_int(a.span)) fe.span = *span;
  }
  flow_ends_.push_back(fe);
}

void ChromeTimelineBuilder::metadata_event(const ChromeEvent& ev) {
  const std::string_view what = as_text(ev.name);
  if (!ev.pid.present()) {
    report_.warn(ImportWarning::kMissingField, ev.offset);
    return;
  }
  const IdKey pid = id_key(ev.pid);
  const auto text_arg = [&](std::string_view key) {
    const JsonScalar* v = ev.arg(key);
    return v != nullptr && v->is_string() ? std::string(v->text) : std::string();
  };
  if (what == "process_name" || what == "process_labels" || what == "process_sort_index") {
    ProcessMeta& m = process_meta_[pid];
    if (what == "process_name") {
      m.name = text_arg("name");
      m.rank = as_int(ev.arg("rank"));
      m.dp = as_int(ev.arg("dp"));
      m.pp = as_int(ev.arg("pp"));
      m.tp = as_int(ev.arg("tp"));
    } else if (what == "process_labels") {
      m.labels = text_arg("labels");
    } else {
      m.sort_index = as_int(ev.arg("sort_index"));
    }
    if (mode_ == Mode::kMeshscope) device_for(DeviceClass::kProcess, pid, ev.offset);
  } else if (what == "thread_name" || what == "thread_sort_index") {
    const ThreadKey thread{pid, id_key(ev.tid)};
    ThreadMeta& m = thread_meta_[thread];
    if (what == "thread_name") {
      m.name = text_arg("name");
      if (const JsonScalar* k = ev.arg("lane_kind"); k != nullptr && k->is_string()) {
        m.kind = parse_lane_kind(k->text);
      }
    } else {
      m.sort_index = as_int(ev.arg("sort_index"));
    }
    if (mode_ == Mode::kMeshscope) {
      if (const auto d = device_for(DeviceClass::kProcess, pid, ev.offset)) {
        // An extra thread of the export's (chrome_export.h) holds slices of the lane it names
        // that overlap others there: they go back on that lane.
        const auto lane = what == "thread_name" ? as_int(ev.arg("lane")) : std::nullopt;
        if (lane && *lane >= 0 && IdKey{*lane, false} != thread.tid) {
          alias_lane(*d, thread.tid, IdKey{*lane, false}, ev.offset);
        } else {
          lane_for(*d, thread.tid, ev.offset);
        }
      }
    }
  }
}

void ChromeTimelineBuilder::counter_event(const ChromeEvent& ev) {
  int64_t t_ns = 0;
  if (!read_time(ev, ev.ts, t_ns)) return;
  if (!ev.pid.present()) {
    report_.warn(ImportWarning::kMissingField, ev.offset);
    return;
  }
  const auto device = device_for(DeviceClass::kProcess, id_key(ev.pid), ev.offset);
  if (!device) return;
  const std::string_view base = as_text(ev.name);
  for (uint32_t i = 0; i < ev.arg_count; ++i) {
    const ChromeArg& arg = ev.args[i];
    if (!arg.value.is_number()) continue;
    double v = 0;
    if (!number_text_to_double(arg.value.text, v)) {
      report_.warn(ImportWarning::kBadNumber, ev.offset);
      continue;
    }
    // One series "value" is the counter itself (meshscope's layout); others get their own name.
    std::string name(base);
    if (arg.key != "value") name += "." + std::string(arg.key);
    auto [it, fresh] = counter_of_.try_emplace({*device, name}, 0);
    if (fresh) {
      it->second = static_cast<uint32_t>(tl_.counters.size());
      tl_.counters.push_back(Counter{*device, name, {}});
    }
    tl_.counters[it->second].samples.push_back(CounterSample{t_ns, v});
  }
}

}  // namespace meshscope::traces::importer
