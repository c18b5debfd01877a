// Reports, parts and the merge of a multi-process run.
#include "profiler/exec/process_run.h"

#include "traces/timeline_merge.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string_view>
#include <tuple>

#include "traces/byte_codec.h"
#include "traces/timeline_codec.h"

namespace meshscope::exec {

std::string encode_report(const ProcessReport& r) {
  traces::ByteWriter w;
  w.put(r.outcome);
  w.put_string(r.message);
  w.put_string(r.where);
  w.put_string(r.host);
  return w.take();
}

ProcessReport decode_report(const std::string& bytes) {
  traces::ByteReader r(bytes, "process report");
  ProcessReport out;
  out.outcome = r.get<ProcessReport::Outcome>();
  if (static_cast<uint8_t>(out.outcome) > static_cast<uint8_t>(ProcessReport::Outcome::kAborted)) {
    throw std::runtime_error("process report: unknown outcome");
  }
  out.message = r.get_string();
  out.where = r.get_string();
  out.host = r.get_string();
  return out;
}

std::string combine_reports(const std::vector<ProcessReport>& reports, bool& deadlock) {
  using Outcome = ProcessReport::Outcome;
  const auto fired = std::find_if(reports.begin(), reports.end(), [](const ProcessReport& r) {
    return r.outcome == Outcome::kDeadlock;
  });
  deadlock = fired != reports.end();
  if (deadlock) {
    // "deadlock: no progress for 5 s" from the watchdog that fired, then every process's clauses.
    std::string msg = fired->message.substr(0, fired->message.find("; "));
    for (const ProcessReport& r : reports) {
      if (!r.where.empty()) msg += "; " + r.where;
    }
    return msg;
  }
  for (const ProcessReport& r : reports) {
    if (r.outcome == Outcome::kFailed) return r.message;
  }
  for (const ProcessReport& r : reports) {
    if (r.outcome == Outcome::kAborted) return r.message;
  }
  return "";
}

std::string encode_part(const ProcessPart& p) {
  traces::ByteWriter w;
  w.put_vector(p.ranks);
  for (const RankResult& r : p.results) {
    w.put(r.steps_begin_ns);
    w.put(r.steps_end_ns);
    w.put(r.actions);
    w.put_vector(r.losses);
    w.put<uint64_t>(r.stage_weights.size());
    for (const auto& stage : r.stage_weights) {
      w.put<uint64_t>(stage.size());
      for (const model::LinearWeights& l : stage) {
        w.put_string(l.name);
        w.put<int32_t>(l.in);
        w.put<int32_t>(l.out);
        w.put_vector(l.w);
        w.put_vector(l.b);
      }
    }
  }
  w.put_string(traces::encode_timeline(p.timeline));
  w.put_string(p.host);
  return w.take();
}

ProcessPart decode_part(const std::string& bytes) {
  traces::ByteReader r(bytes, "process part");
  ProcessPart p;
  p.ranks = r.get_vector<int>();
  for (size_t i = 0; i < p.ranks.size(); ++i) {
    RankResult res;
    res.steps_begin_ns = r.get<int64_t>();
    res.steps_end_ns = r.get<int64_t>();
    res.actions = r.get<int64_t>();
    res.losses = r.get_vector<double>();
    const uint64_t stages = r.get_count(8);
    for (uint64_t s = 0; s < stages; ++s) {
      std::vector<model::LinearWeights> stage(r.get_count(8 + 4 + 4 + 8 + 8));
      for (model::LinearWeights& l : stage) {
        l.name = r.get_string();
        l.in = r.get<int32_t>();
        l.out = r.get<int32_t>();
        l.w = r.get_vector<float>();
        l.b = r.get_vector<float>();
      }
      res.stage_weights.push_back(std::move(stage));
    }
    p.results.push_back(std::move(res));
  }
  p.timeline = traces::decode_timeline(r.get_string());
  p.host = r.get_string();
  if (!r.done()) throw std::runtime_error("process part: trailing bytes");
  return p;
}

namespace {

// Where part p's times go on process 0's axis: add the returned ns.
int64_t shift_of(const ProcessPart& p, const ProcessPart& root) {
  if (p.results.empty() || root.results.empty() || p.timeline.steps.empty() ||
      root.timeline.steps.empty()) {
    return 0;
  }
  // origin = absolute host time of the Timeline's zero, from step 0 seen both ways.
  const int64_t origin_p = p.results.front().steps_begin_ns - p.timeline.steps.front().begin_ns;
  const int64_t origin_0 =
      root.results.front().steps_begin_ns - root.timeline.steps.front().begin_ns;
  if (p.host == root.host) return origin_p - origin_0;
  return root.timeline.steps.front().begin_ns - p.timeline.steps.front().begin_ns;
}

bool hosted(const ProcessPart& p, int rank) {
  return std::find(p.ranks.begin(), p.ranks.end(), rank) != p.ranks.end();
}

}  // namespace

traces::Timeline merge_parts(std::vector<ProcessPart>& parts) {
  if (parts.empty()) throw std::invalid_argument("merge_parts: no parts");
  const ProcessPart& root = parts.front();
  traces::Timeline out;
  out.metadata = root.timeline.metadata;
  out.run = root.timeline.run;
  // A rank's device comes from the process that ran it, in process 0's device order; devices of
  // no rank (a GPU's unattributed records) follow, from every process, named after it.
  std::vector<std::vector<int>> device_map(parts.size());
  for (size_t pi = 0; pi < parts.size(); ++pi) {
    device_map[pi].assign(parts[pi].timeline.devices.size(), -1);
  }
  for (const traces::Device& want : root.timeline.devices) {
    if (want.rank < 0) continue;
    for (size_t pi = 0; pi < parts.size(); ++pi) {
      if (!hosted(parts[pi], want.rank)) continue;
      const auto& devices = parts[pi].timeline.devices;
      for (size_t d = 0; d < devices.size(); ++d) {
        if (devices[d].rank == want.rank && device_map[pi][d] < 0) {
          device_map[pi][d] = static_cast<int>(out.devices.size());
          out.devices.push_back(devices[d]);
          break;
        }
      }
    }
  }
  for (size_t pi = 0; pi < parts.size(); ++pi) {
    const auto& devices = parts[pi].timeline.devices;
    for (size_t d = 0; d < devices.size(); ++d) {
      if (devices[d].rank >= 0) continue;
      device_map[pi][d] = static_cast<int>(out.devices.size());
      out.devices.push_back(devices[d]);
      if (parts.size() > 1) out.devices.back().name += " \u00b7 process " + std::to_string(pi);
    }
  }
  if (out.devices.size() > UINT16_MAX) throw std::runtime_error("merge: too many devices");
  std::vector<int64_t> shifts(parts.size(), 0);
  for (size_t pi = 0; pi < parts.size(); ++pi) shifts[pi] = shift_of(parts[pi], root);

  for (size_t pi = 0; pi < parts.size(); ++pi) {
    traces::append_timeline(out, parts[pi].timeline, device_map[pi], shifts[pi]);
    const int64_t result_shift =
        parts[pi].host == root.host || parts[pi].results.empty() || root.results.empty()
            ? 0
            : root.results.front().steps_begin_ns - parts[pi].results.front().steps_begin_ns;
    for (RankResult& r : parts[pi].results) {
      r.steps_begin_ns += result_shift;
      r.steps_end_ns += result_shift;
    }
  }
  std::sort(out.counters.begin(), out.counters.end(),
            [](const traces::Counter& a, const traces::Counter& b) { return a.device < b.device; });
  link_unpaired_transfers(out);
  out.sort_spans();
  return out;
}

void link_unpaired_transfers(traces::Timeline& t) {
  std::vector<bool> linked(t.spans.size(), false);
  for (const traces::Flow& f : t.flows) linked[f.from] = linked[f.to] = true;
  // (dp, tp, backward, receiving stage, microbatch) -> span indices by time
  using Key = std::tuple<int, int, bool, int, int>;
  std::map<Key, std::vector<uint32_t>> sends, recvs;
  for (uint32_t i = 0; i < t.spans.size(); ++i) {
    const traces::Span& s = t.spans[i];
    if (linked[i] || (s.kind != traces::SpanKind::kSend && s.kind != traces::SpanKind::kRecv)) {
      continue;
    }
    // Direction from the span's phase: activations go forward, gradients come back.
    if (s.phase != traces::Phase::kForward && s.phase != traces::Phase::kBackward) continue;
    const bool send = s.kind == traces::SpanKind::kSend;
    const bool backward = s.phase == traces::Phase::kBackward;
    const int receiver = send ? s.stage + (backward ? -1 : 1) : s.stage;
    const traces::MeshCoord c = t.devices[s.device].coord;
    (send ? sends : recvs)[{c.dp, c.tp, backward, receiver, s.microbatch}].push_back(i);
  }
  auto by_time = [&](uint32_t a, uint32_t b) { return t.spans[a].begin_ns < t.spans[b].begin_ns; };
  for (auto& [key, from] : sends) {
    auto it = recvs.find(key);
    if (it == recvs.end()) continue;
    std::vector<uint32_t>& to = it->second;
    std::sort(from.begin(), from.end(), by_time);
    std::sort(to.begin(), to.end(), by_time);
    for (size_t k = 0; k < std::min(from.size(), to.size()); ++k) t.add_flow(from[k], to[k]);
  }
}

}  // namespace meshscope::exec
