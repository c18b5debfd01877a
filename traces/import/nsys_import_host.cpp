// Nsight Systems export: the host side (CUDA runtime calls, NVTX ranges), the launch flows from
// calls to the GPU work they launched, and the direction of NCCL SendRecv kernels from the NVTX
// ranges around their launch (nsys_importer.h).
#include <algorithm>
#include <iterator>
#include <string>

#include "traces/import/nsys_importer.h"

namespace meshscope::traces::importer::nsys {

void Importer::read_runtime() {
  const std::string table(kRuntimeTable);
  if (!options_.keep_host) {
    SqliteStatement count(db_.get(), "SELECT count(*) FROM " + table);
    if (count.step()) {
      report_.warn_at(ImportWarning::kHostDropped, table,
                      static_cast<uint64_t>(count.integer(0).value_or(0)));
    }
    if (!send_recv_.empty()) read_sendrecv_launches();
    return;
  }
  SqliteStatement q(db_.get(), "SELECT " + col(table, "start") + ", " + col(table, "end") + ", " +
                                   col(table, "globalTid") + ", " + col(table, "correlationId") +
                                   ", " + name_value(table, "nameId") + ", " + rowid(table) +
                                   " FROM " + table + name_join(table, "nameId"));
  for_each_interval(q, table, 5, [&](Span s, const auto& where) {
    if (!place_on_thread(q.integer(2), s)) {
      report_.warn_at(unplaced_thread_warning(q, 2), where());
      return;
    }
    s.kind = SpanKind::kHost;
    // Without its name a call's category (cuda_runtime, cuda_driver) is lost too.
    if (q.text(4).empty()) report_.warn_at(ImportWarning::kUnnamedHostCall, where());
    s.name = intern(q.text(4));
    const uint32_t index = tl_.add_span(s);
    keep_origin(index, std::nullopt, q.integer(3));
    if (const auto corr = q.integer(3)) {
      if (launch_of_.count({pid_of(*q.integer(2)), *corr}))
        report_.warn_at(ImportWarning::kDuplicateLaunch, where());
      launch_of_[{pid_of(*q.integer(2)), *corr}] = index;
      launch_by_correlation_[*corr] = index;
      note_sendrecv_launch(*q.integer(2), *corr, s.begin_ns);
    }
  });
}

void Importer::read_nvtx() {
  const std::string table(kNvtxTable);
  const bool text_ids = db_.has_column(table, "textId") && db_.has_table("StringIds");
  const std::string text = db_.has_column(table, "text") ? table + ".\"text\"" : "NULL";
  SqliteStatement q(db_.get(), "SELECT " + col(table, "start") + ", " + col(table, "end") + ", " +
                                   col(table, "globalTid") + ", " +
                                   (text_ids ? "COALESCE(" + text + ", s.value)" : text) + ", " +
                                   col(table, "eventType") + ", " + rowid(table) + " FROM " +
                                   table + (text_ids ? name_join(table, "textId") : "") +
                                   " WHERE " + col(table, "eventType") + " IN (" +
                                   std::to_string(nsys::kNvtxPushPopRange) + ", " +
                                   std::to_string(nsys::kNvtxStartEndRange) + ", " +
                                   std::to_string(nsys::kNvtxtPushPopRange) + ", " +
                                   std::to_string(nsys::kNvtxtStartEndRange) + ")");
  // An unended range has a NULL end: a warning, not a span.
  for_each_interval(q, table, 5, [&](Span s, const auto& where) {
    const std::string_view name = q.text(3);
    if (const auto tid = q.integer(2); tid && !send_recv_.empty()) {
      directions_.add_range(*tid, s.begin_ns, s.end_ns, name);
    }
    if (const auto n = profiler_step_number(name)) {
      auto [it, fresh] = steps_.try_emplace(*n, StepWindow{s.begin_ns, s.end_ns});
      if (!fresh) {
        it->second.begin_ns = std::min(it->second.begin_ns, s.begin_ns);
        it->second.end_ns = std::max(it->second.end_ns, s.end_ns);
      }
    } else if (is_unnumbered_profiler_step(name)) {
      report_.warn_at(ImportWarning::kUnnumberedStep, where());
    }
    if (!options_.keep_host) {
      report_.warn_at(ImportWarning::kHostDropped, where());
      return;
    }
    if (!place_on_thread(q.integer(2), s)) {
      report_.warn_at(unplaced_thread_warning(q, 2), where());
      return;
    }
    s.kind = SpanKind::kAnnotation;
    s.name = intern(name);
    if (nsys::is_start_end(q.integer(4).value_or(0))) {
      start_end_.push_back(s);  // placed below, off the push/pop stacks
      return;
    }
    tl_.add_span(s);
  });
  place_start_end_ranges();
}

void Importer::place_start_end_ranges() {
  std::stable_sort(start_end_.begin(), start_end_.end(),
                   [](const Span& a, const Span& b) { return a.begin_ns < b.begin_ns; });
  std::map<uint16_t, std::vector<std::pair<uint16_t, int64_t>>> lanes;  // device -> (lane, end)
  for (Span s : start_end_) {
    auto& free = lanes[s.device];
    auto it = std::find_if(free.begin(), free.end(),
                           [&](const auto& l) { return l.second <= s.begin_ns; });
    if (it == free.end()) {
      if (tl_.devices[s.device].lanes.size() >= UINT16_MAX) {
        report_.warn_at(ImportWarning::kTooManyDevicesOrLanes, "NVTX start/end ranges");
        continue;
      }
      const uint16_t lane =
          tl_.add_lane(s.device, "NVTX start/end " + std::to_string(free.size()), LaneKind::kHost);
      free.emplace_back(lane, s.end_ns);
      it = std::prev(free.end());
    }
    it->second = s.end_ns;
    s.lane = it->first;
    tl_.add_span(s);
  }
  start_end_.clear();
}

void Importer::read_sendrecv_launches() {
  for_each_runtime_call(
      [&](std::optional<int64_t> start, std::optional<int64_t> tid, std::optional<int64_t> corr) {
        if (start && tid && corr) note_sendrecv_launch(*tid, *corr, *start);
      });
}

void Importer::note_sendrecv_launch(int64_t global_tid, int64_t correlation, int64_t begin_ns) {
  if (sendrecv_correlations_.empty()) return;
  const std::pair key{pid_of(global_tid), correlation};
  if (sendrecv_correlations_.count(key)) sendrecv_launch_[key] = {global_tid, begin_ns};
}

void Importer::resolve_send_recv() {
  for (const SendRecvKernel& k : send_recv_) {
    CommOp op = CommOp::kSendRecv;
    if (k.correlation) {
      const auto launch = sendrecv_launch_.find({k.pid, *k.correlation});
      if (launch != sendrecv_launch_.end()) {
        op = directions_.direction(launch->second.first, launch->second.second);
      }
    }
    if (op == CommOp::kSendRecv) {
      report_.warn_at(ImportWarning::kSendRecvDirection, k.where);
    } else {
      tl_.spans[k.span].kind = span_kind_of(op);
    }
  }
}

ImportWarning Importer::unplaced_thread_warning(const SqliteStatement& q, int column) {
  if (q.is_null(column)) return ImportWarning::kMissingField;
  return q.integer(column) ? ImportWarning::kTooManyDevicesOrLanes : ImportWarning::kWrongType;
}

bool Importer::place_on_thread(std::optional<int64_t> global_tid, Span& s) {
  if (!global_tid) return false;
  const auto lane = host_lane_.find({pid_of(*global_tid), tid_of(*global_tid)});
  if (lane == host_lane_.end()) return false;
  s.device = host_device_.at(pid_of(*global_tid));
  s.lane = lane->second;
  return true;
}

std::vector<DroppedLaunch> Importer::dropped_launches() {
  std::vector<DroppedLaunch> out;
  const std::string table(kRuntimeTable);
  if (options_.keep_host || steps_.empty() || !present_.count(table)) return out;
  std::map<std::pair<int64_t, int64_t>, uint32_t> launched;  // (pid, correlationId) -> span
  std::unordered_map<int64_t, uint32_t> launched_without_pid;
  for (const Launched& l : launched_) {
    if (l.pid >= 0)
      launched.emplace(std::pair{l.pid, l.correlation}, l.span);
    else
      launched_without_pid.emplace(l.correlation, l.span);
  }
  for_each_runtime_call(
      [&](std::optional<int64_t> start, std::optional<int64_t> tid, std::optional<int64_t> corr) {
        if (!start || !corr || !time_in_range(*start)) return;
        std::optional<uint32_t> span;
        if (const auto it = tid ? launched.find({pid_of(*tid), *corr}) : launched.end();
            it != launched.end()) {
          span = it->second;
        } else if (const auto any = launched_without_pid.find(*corr);
                   any != launched_without_pid.end()) {
          span = any->second;
        }
        if (!span) return;
        const Span& s = tl_.spans[*span];
        out.push_back({*start, s.begin_ns, s.end_ns, s.name});
      });
  return out;
}

void Importer::link_launches() {
  for (const Launched& l : launched_) {
    auto it = launch_of_.find({l.pid, l.correlation});
    if (it != launch_of_.end()) {
      tl_.add_flow(it->second, l.span);
    } else if (l.pid < 0) {
      const auto any = launch_by_correlation_.find(l.correlation);
      if (any != launch_by_correlation_.end()) tl_.add_flow(any->second, l.span);
    }
  }
}

}  // namespace meshscope::traces::importer::nsys
