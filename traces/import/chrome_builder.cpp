// Complete events -> spans (the per-event half of the builder with chrome_builder_events.cpp, which
// reads the other phases; chrome_builder_finish.cpp completes the Timeline).
#include "traces/import/chrome_builder.h"

#include "traces/import/chrome_args.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>

namespace meshscope::traces::importer {
namespace {

constexpr uint32_t kNoSpan = UINT32_MAX;

}  // namespace

ChromeTimelineBuilder::ChromeTimelineBuilder(std::string file, const ImportOptions& options,
                                             ImportReport& report)
    : file_(std::move(file)),
      options_(options),
      comm_rules_(options.comm_kernel_patterns),
      report_(report) {}

uint32_t ChromeTimelineBuilder::intern(std::string_view s) {
  const auto it = names_.find(s);
  if (it != names_.end()) return it->second;
  const uint32_t id = tl_.strings.intern(s);
  names_.emplace(std::string(s), id);
  return id;
}

IdKey ChromeTimelineBuilder::id_key(const JsonScalar& v) {
  if (v.type == JsonType::kNumber) {
    int64_t x = 0;
    if (number_text_to_int(v.text, x)) return {x, false};
  } else if (v.type != JsonType::kString) {
    return {};
  }
  const auto it = id_strings_.find(v.text);
  if (it != id_strings_.end()) return {it->second, true};
  const auto id = static_cast<uint32_t>(id_string_list_.size());
  id_string_list_.emplace_back(v.text);
  id_strings_.emplace(std::string(v.text), id);
  return {id, true};
}

void ChromeTimelineBuilder::on_event(const ChromeEvent& ev) {
  saw_event_ = true;
  if (!ev.ph.is_string() || ev.ph.text.size() != 1) {
    report_.warn(ev.ph.present() ? ImportWarning::kWrongType : ImportWarning::kMissingField,
                 ev.offset);
    if (mode_ == Mode::kMeshscope) x_event_span_.push_back(kNoSpan);
    return;
  }
  // pid and tid name a process and a thread: a number or a string. An object or an array would
  // otherwise become pid 0 / tid 0 without a word.
  const auto is_id = [](const JsonScalar& v) {
    return !v.present() || v.is_string() || v.is_number();
  };
  const char ph = ev.ph.text[0];
  if (!is_id(ev.pid) || !is_id(ev.tid)) {
    report_.warn(ImportWarning::kWrongType, ev.offset);
    if (mode_ == Mode::kMeshscope && ph == 'X') x_event_span_.push_back(kNoSpan);
    return;
  }
  switch (ph) {
    case 'X':
      complete_event(ev);
      break;
    case 'B':
      begin_event(ev);
      break;
    case 'E':
      end_event(ev);
      break;
    case 's':
    case 't':
    case 'f':
      flow_event(ev, ph);
      break;
    case 'M':
      metadata_event(ev);
      break;
    case 'C':
      counter_event(ev);
      break;
    default:
      report_.warn(ImportWarning::kUnsupportedPhase, ev.offset);
      break;
  }
}

bool ChromeTimelineBuilder::read_time(const ChromeEvent& ev, const JsonScalar& v, int64_t& ns) {
  if (!v.present()) {
    report_.warn(ImportWarning::kMissingField, ev.offset);
    return false;
  }
  if (!v.is_number()) {
    report_.warn(ImportWarning::kWrongType, ev.offset);
    return false;
  }
  if (!micros_text_to_ns(v.text, ns) || !time_in_range(ns)) {
    report_.warn(ImportWarning::kBadNumber, ev.offset);
    return false;
  }
  return true;
}

ChromeTimelineBuilder::Placed ChromeTimelineBuilder::place(const ChromeEvent& ev) {
  Placed p;
  const std::string_view cat = ev.cat.is_string() ? ev.cat.text : std::string_view{};
  if (mode_ == Mode::kMeshscope) {
    // Every event sits on device pid, lane tid. The kind is args.kind (version 2, whose cat is
    // Kineto's), or the cat itself (version 1).
    if (const JsonScalar* kind = ev.arg("kind")) {
      if (const auto k = kind->is_string() ? parse_span_kind(kind->text) : std::nullopt) {
        p.kind = *k;
        return p;
      }
      report_.warn(ImportWarning::kWrongType, ev.offset);
    }
  }
  if (const auto kind = parse_span_kind(cat)) {  // meshscope's own categories
    p.kind = *kind;
    return p;
  }
  const CategoryInfo info = classify_kineto_category(cat);
  if (info.category == KinetoCategory::kUnknown &&
      (ev.arg("stream") != nullptr || ev.arg("device") != nullptr)) {
    // Device work of a kind not understood: say so rather than let it vanish from device time.
    report_.warn_at(ImportWarning::kUnknownDeviceCategory,
                    "category \"" + std::string(cat) + "\" at byte " + std::to_string(ev.offset));
  }
  if (info.placement == Placement::kSkip) {
    p.skip = true;
    return p;
  }
  p.kind = info.kind;
  if (mode_ == Mode::kMeshscope) return p;
  if (info.category != KinetoCategory::kUnknown) saw_kineto_ = true;
  p.cls = info.placement == Placement::kGpu ? DeviceClass::kGpu : DeviceClass::kProcess;
  p.host = info.placement == Placement::kHost;
  if (info.category == KinetoCategory::kKernel) {
    p.comm = comm_rules_.classify(as_text(ev.name)).op;
    if (p.comm != CommOp::kNone) p.kind = span_kind_of(p.comm);
  }
  return p;
}

void ChromeTimelineBuilder::complete_event(const ChromeEvent& ev) {
  Span s;
  int64_t dur = 0;
  const bool ok = [&] {
    if (!read_time(ev, ev.ts, s.begin_ns)) return false;
    if (!read_time(ev, ev.dur, dur)) return false;
    if (dur < 0) {
      report_.warn(ImportWarning::kNegativeDuration, ev.offset);
      return false;
    }
    if (__builtin_add_overflow(s.begin_ns, dur, &s.end_ns) || !time_in_range(s.end_ns)) {
      report_.warn(ImportWarning::kBadNumber, ev.offset);
      return false;
    }
    return true;
  }();
  const Placed p = ok ? place(ev) : Placed{};
  uint32_t index = kNoSpan;
  if (ok && !p.skip) {
    if (mode_ == Mode::kKineto)
      note_profiler_step(as_text(ev.name), s.begin_ns, s.end_ns, ev.offset);
    if (p.host && !options_.keep_host) {
      report_.warn(ImportWarning::kHostDropped, ev.offset);
      note_dropped_call(ev, s.begin_ns);
    } else {
      index = emit_span(ev, p, s, /*open_only=*/false);
    }
  }
  if (mode_ == Mode::kMeshscope) x_event_span_.push_back(index);
}

void ChromeTimelineBuilder::note_dropped_call(const ChromeEvent& ev, int64_t begin_ns) {
  if (mode_ != Mode::kKineto) return;
  if (const auto c = as_int(scan_args(ev).correlation)) dropped_call_at_.emplace(*c, begin_ns);
}

void ChromeTimelineBuilder::note_profiler_step(std::string_view name, int64_t begin_ns,
                                               int64_t end_ns, int64_t byte_offset) {
  const auto n = profiler_step_number(name);
  if (!n) {
    if (is_unnumbered_profiler_step(name))
      report_.warn(ImportWarning::kUnnumberedStep, byte_offset);
    return;
  }
  auto [it, fresh] = profiler_steps_.try_emplace(*n, StepWindow{begin_ns, end_ns});
  if (!fresh) {
    it->second.begin_ns = std::min(it->second.begin_ns, begin_ns);
    it->second.end_ns = std::max(it->second.end_ns, end_ns);
  }
}

uint32_t ChromeTimelineBuilder::emit_span(const ChromeEvent& ev, const Placed& p, Span s,
                                          bool open_only) {
  const ArgView a = scan_args(ev);
  const auto slot = slot_for(ev, p.cls, as_int(a.device), as_int(a.stream));
  if (!slot) return kNoSpan;
  s.device = slots_[*slot].device;
  s.lane = slots_[*slot].lane;
  s.name = intern(as_text(ev.name));
  s.kind = p.kind;
  if (const auto v = as_int(a.stage)) s.stage = clamp_to<int16_t>(*v, -1);
  if (const auto v = as_int(a.microbatch)) s.microbatch = clamp_to<int32_t>(*v, -1);
  if (a.phase != nullptr && a.phase->is_string()) {
    s.phase = parse_phase(a.phase->text).value_or(Phase::kNone);
  }
  if (const auto v = as_int(a.bytes)) s.bytes = *v;
  if (a.flops != nullptr && a.flops->is_number()) {
    double f = 0;
    if (number_text_to_double(a.flops->text, f)) s.flops = f;
  }
  CommOp comm = p.comm;
  if (a.collective != nullptr && a.collective->is_string()) {
    const CommOp named = comm_op_from_collective_name(a.collective->text);
    if (comm != CommOp::kNone && named != CommOp::kNone) {
      comm = named;  // the kernel's own "Collective name" tells a SendRecv's direction
      s.kind = span_kind_of(comm);
    }
  }
  if (comm != CommOp::kNone && s.bytes == 0) s.bytes = nccl_bytes(a);
  const auto external_id = as_int(a.external_id);
  if (p.host && external_id) {
    // Ops that launch NCCL kernels tell the direction of SendRecv kernels they launch.
    CommOp op = comm_op_from_op_name(as_text(ev.name));
    if (a.collective != nullptr && a.collective->is_string()) {
      op = comm_op_from_collective_name(a.collective->text);
    }
    if (op != CommOp::kNone) comm_op_of_external_id_[*external_id] = op;
  }
  if (open_only) {
    slots_[*slot].open.push_back(s);
    if (options_.keep_origins) slots_[*slot].open_origins.push_back(origin_of(ev, a));
    return kNoSpan;
  }
  const uint32_t index = tl_.add_span(s);
  if (a.collective_op != nullptr)
    read_collective(ev, a, index);
  else if (s.kind == SpanKind::kCollective && p.cls == DeviceClass::kGpu && a.group_size != nullptr)
    read_nccl_collective(a, as_text(ev.name), index, s.bytes);
  if (a.waited_ns != nullptr) {
    const auto wait = as_int(a.waited_ns);
    if (!wait || *wait < 0) {
      report_.warn(ImportWarning::kWrongType, ev.offset);  // the span stays, without its wait
    } else {
      tl_.set_wait(index, *wait);
    }
  }
  if (options_.keep_origins) {
    SpanOrigin o = origin_of(ev, a);
    o.span = index;
    tl_.origins.push_back(o);
  }
  if (mode_ == Mode::kKineto) {
    const bool gpu = p.cls == DeviceClass::kGpu && is_device_activity(s.kind);
    if (const auto c = as_int(a.correlation); c && (gpu || p.host)) {
      correlation_ends_.push_back({*c, index, gpu});
    }
  }
  if (comm == CommOp::kSendRecv) send_recv_.emplace_back(index, external_id.value_or(-1));
  return index;
}

void ChromeTimelineBuilder::read_collective(const ChromeEvent& ev, const ArgView& a,
                                            uint32_t span) {
  const auto named = [](const JsonScalar* v, auto parse) -> decltype(parse(std::string_view{})) {
    if (v == nullptr || !v->is_string()) return std::nullopt;
    return parse(v->text);
  };
  const auto op = named(a.collective_op, parse_collective_op);
  const auto group = named(a.collective_group, parse_group_kind);
  const auto algorithm = a.collective_algorithm == nullptr
                             ? std::optional(CollectiveAlgorithm::kAuto)
                             : named(a.collective_algorithm, parse_collective_algorithm);
  const auto bytes =
      a.collective_bytes == nullptr ? std::optional<int64_t>(0) : as_int(a.collective_bytes);
  const auto count = [](const JsonScalar* v, int64_t absent) {
    return v == nullptr ? std::optional<int64_t>(absent) : as_int(v);
  };
  const auto ranks = count(a.collective_ranks, 0);
  const auto first = count(a.collective_first_rank, -1);
  const auto stride = count(a.collective_rank_stride, 0);
  if (!op || !group || !algorithm || !bytes || *bytes < 0 || !ranks || *ranks < 0 ||
      *ranks > kMaxGroupRanks || !first || *first < -1 || *first > INT32_MAX || !stride ||
      *stride < 0 || *stride > INT32_MAX) {
    report_.warn(ImportWarning::kWrongType, ev.offset);  // the span stays, without its collective
    return;
  }
  tl_.set_collective(span, Collective{.op = *op,
                                      .group = *group,
                                      .bytes = *bytes,
                                      .algorithm = *algorithm,
                                      .ranks = static_cast<int32_t>(*ranks),
                                      .first_rank = static_cast<int32_t>(*first),
                                      .rank_stride = static_cast<int32_t>(*stride)});
}

void ChromeTimelineBuilder::read_nccl_collective(const ArgView& a, std::string_view kernel,
                                                 uint32_t span, int64_t bytes) {
  const auto ranks = as_int(a.group_size);
  if (!ranks || *ranks < 2 || *ranks > kMaxGroupRanks) return;
  // PyTorch's name for the call where it gives one ("allreduce_coalesced" is no one buffer's
  // all-reduce, whatever its kernel), else the kernel's.
  const std::optional<CollectiveOp> op = a.collective != nullptr && a.collective->is_string()
                                             ? collective_op_named(a.collective->text)
                                             : collective_op_named(kernel);
  Collective c{.op = op.value_or(CollectiveOp::kOther),  // a broadcast: kept for its group
               .group = GroupKind::kWorld,
               .bytes = bytes,
               .ranks = static_cast<int32_t>(*ranks)};
  if (a.group_ranks != nullptr && a.group_ranks->is_string()) {
    if (const auto members = evenly_spaced_ranks(a.group_ranks->text, *ranks)) {
      c.first_rank = members->first;
      c.rank_stride = members->second;
    }
  }
  tl_.set_collective(span, c);
}

namespace {

// Args the Chrome export writes from the Span, its origin and its side tables (collective, wait);
// the rest of an event's args are kept as they were written.
bool written_by_export(std::string_view key) {
  for (const std::string_view k : {"kind", "stream", "correlation", "stage", "microbatch", "phase",
                                   "bytes", "flops", "collective_op", "collective_group",
                                   "collective_bytes", "collective_algorithm", "waited_ns"}) {
    if (key == k) return true;
  }
  return false;
}

// False for a member the reader accepts but JSON does not (NaN, Infinity): it cannot be written
// back as it was. Nested values are searched as text, which may drop a string that spells them.
bool is_plain_json(const ChromeArg& arg) {
  if (arg.value.is_number()) return arg.value.text.find_first_of("NI") == std::string_view::npos;
  if (arg.value.type != JsonType::kObject && arg.value.type != JsonType::kArray) return true;
  return arg.raw.find("NaN") == std::string_view::npos &&
         arg.raw.find("Infinity") == std::string_view::npos;
}

}  // namespace

SpanOrigin ChromeTimelineBuilder::origin_of(const ChromeEvent& ev, const ArgView& a) {
  SpanOrigin o;
  if (const auto v = as_int(a.stream)) o.stream = clamp_to<int32_t>(*v, SpanOrigin::kNoStream);
  if (const auto v = as_int(a.correlation)) o.correlation = *v;
  if (ev.cat.is_string()) o.category = intern(ev.cat.text);
  args_scratch_.clear();
  for (uint32_t i = 0; i < ev.arg_count; ++i) {
    const ChromeArg& arg = ev.args[i];
    if (written_by_export(arg.key) || !is_plain_json(arg)) continue;
    if (!args_scratch_.empty()) args_scratch_ += ", ";
    args_scratch_ += arg.raw;
  }
  if (ev.args_truncated) report_.warn(ImportWarning::kArgsTruncated, ev.offset);
  o.args = tl_.origin_args.add(args_scratch_);
  return o;
}

int64_t ChromeTimelineBuilder::nccl_bytes(const ArgView& a) const {
  const auto size =
      a.dtype != nullptr && a.dtype->is_string() ? dtype_bytes(a.dtype->text) : std::nullopt;
  const int64_t n = std::max(as_int(a.in_nelems).value_or(0), as_int(a.out_nelems).value_or(0));
  if (!size || n <= 0 || n > (int64_t{1} << 56)) return 0;
  return n * *size;
}

std::optional<uint32_t> ChromeTimelineBuilder::slot_for(const ChromeEvent& ev, DeviceClass cls,
                                                        std::optional<int64_t> device_arg,
                                                        std::optional<int64_t> stream_arg) {
  if (!ev.pid.present()) {
    report_.warn(ImportWarning::kMissingField, ev.offset);
    return std::nullopt;
  }
  const ThreadKey thread{id_key(ev.pid), id_key(ev.tid)};
  if (last_slot_ != kNoSpan && thread == last_thread_) return last_slot_;
  auto it = slot_of_.find(thread);
  if (it == slot_of_.end()) {
    IdKey device_key = thread.pid;
    IdKey lane_key = thread.tid;
    if (cls == DeviceClass::kGpu) {
      if (device_arg) device_key = IdKey{*device_arg, false};
      if (stream_arg) lane_key = IdKey{*stream_arg, false};
    }
    const auto device = device_for(cls, device_key, ev.offset);
    if (!device) return std::nullopt;
    const auto lane = lane_for(*device, lane_key, ev.offset);
    if (!lane) return std::nullopt;
    slots_.push_back(ThreadSlot{*device, *lane, {}, {}});
    it = slot_of_.emplace(thread, static_cast<uint32_t>(slots_.size() - 1)).first;
  }
  last_thread_ = thread;
  last_slot_ = it->second;
  return it->second;
}

std::optional<uint16_t> ChromeTimelineBuilder::device_for(DeviceClass cls, IdKey key,
                                                          int64_t offset) {
  const DeviceKey dk{cls, key};
  const auto it = device_of_.find(dk);
  if (it != device_of_.end()) return it->second;
  if (devices_.size() >= UINT16_MAX) {
    report_.warn(ImportWarning::kTooManyDevicesOrLanes, offset);
    return std::nullopt;
  }
  devices_.push_back(DeviceRec{cls, key, {}, {}});
  const auto index = static_cast<uint16_t>(devices_.size() - 1);
  device_of_.emplace(dk, index);
  return index;
}

std::optional<uint16_t> ChromeTimelineBuilder::lane_for(uint16_t device, IdKey key,
                                                        int64_t offset) {
  DeviceRec& d = devices_[device];
  const auto it = d.lane_of.find(key);
  if (it != d.lane_of.end()) return it->second;
  if (d.lanes.size() >= UINT16_MAX) {
    report_.warn(ImportWarning::kTooManyDevicesOrLanes, offset);
    return std::nullopt;
  }
  d.lanes.push_back(key);
  const auto index = static_cast<uint16_t>(d.lanes.size() - 1);
  d.lane_of.emplace(key, index);
  return index;
}

void ChromeTimelineBuilder::alias_lane(uint16_t device, IdKey key, IdKey lane, int64_t offset) {
  DeviceRec& d = devices_[device];
  if (d.lane_of.count(key)) return;
  if (const auto index = lane_for(device, lane, offset))
    devices_[device].lane_of.emplace(key, *index);
}

}  // namespace meshscope::traces::importer
