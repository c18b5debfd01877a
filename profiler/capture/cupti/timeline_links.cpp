// The Timeline builder, host side: action annotations (host lane and over each action's GPU
// work), flows from sends to recvs, the activation-memory counter and the step windows.
#include <algorithm>
#include <deque>
#include <tuple>

#include "profiler/capture/cupti/builder_internal.h"

namespace meshscope::capture::cupti::detail {

using traces::Span;
using traces::SpanKind;

void Builder::add_host_actions() {
  for (size_t r = 0; r < in_.host.size() && r < in_.ranks.size(); ++r) {
    for (const HostAction& h : in_.host[r]) {
      const ExternalKey key{h.step, static_cast<int>(r), h.index, h.inner};
      const ActionInfo* action = action_of(key);
      if (action == nullptr) continue;
      const InnerInfo* inner = inner_of(key);
      Span s;
      s.begin_ns = h.begin_ns;
      s.end_ns = h.end_ns;
      s.kind = SpanKind::kAnnotation;
      s.name = t_.strings.intern(inner != nullptr ? inner->label : action->label);
      s.device = static_cast<uint16_t>(r);
      s.lane = host_lane_[r];
      s.stage = static_cast<int16_t>(action->action.stage);
      s.microbatch = action->action.microbatch;
      s.phase = action->phase;
      s.bytes = inner != nullptr ? inner->bytes : action->bytes;
      host_span_[encode(key)] = t_.add_span(s);
      note_step(host_steps_, h.step, h.begin_ns, h.end_ns);
    }
  }
}

void Builder::add_action_annotations() {
  for (const auto& [id, work] : gpu_) {
    const auto key = decode_external_id(id);
    const ActionInfo* action = key ? action_of(*key) : nullptr;
    if (action == nullptr || work.first_span == UINT32_MAX) continue;
    const InnerInfo* inner = inner_of(*key);
    Span s;
    s.begin_ns = work.begin_ns;
    s.end_ns = work.end_ns;
    s.kind = SpanKind::kAnnotation;
    s.name = t_.strings.intern(inner != nullptr ? inner->label : action->label);
    s.device = static_cast<uint16_t>(key->rank);
    s.lane = work.lane;
    s.stage = static_cast<int16_t>(action->action.stage);
    s.microbatch = action->action.microbatch;
    s.phase = action->phase;
    s.flops = inner != nullptr ? 0 : action->flops;
    t_.add_span(s);
  }
}

void Builder::add_flows(BuildReport& report) {
  // (step, source rank, destination rank, tag) -> span indices, in issue order.
  using Key = std::tuple<int, int, int, int64_t>;
  std::map<Key, std::deque<uint32_t>> sends, recvs;
  for (size_t r = 0; r < in_.host.size() && r < in_.ranks.size(); ++r) {
    for (const HostAction& h : in_.host[r]) {
      if (h.inner >= 0) continue;
      const ExternalKey key{h.step, static_cast<int>(r), h.index, -1};
      const ActionInfo* action = action_of(key);
      if (action == nullptr || action->peer < 0) continue;
      const bool send = schedule::is_send(action->action.kind);
      if (!send && !schedule::is_recv(action->action.kind)) continue;
      uint32_t span = UINT32_MAX;
      if (auto gpu = gpu_.find(encode(key)); gpu != gpu_.end()) {
        span = send ? gpu->second.last_span : gpu->second.first_span;
      } else if (auto host = host_span_.find(encode(key)); host != host_span_.end()) {
        span = host->second;
      }
      if (span == UINT32_MAX) continue;
      const int self = static_cast<int>(r);
      if (send) {
        sends[{h.step, self, action->peer, action->tag}].push_back(span);
      } else {
        recvs[{h.step, action->peer, self, action->tag}].push_back(span);
      }
    }
  }
  for (auto& [key, from] : sends) {
    auto to = recvs.find(key);
    if (to == recvs.end()) continue;
    while (!from.empty() && !to->second.empty()) {
      t_.add_flow(from.front(), to->second.front());
      from.pop_front();
      to->second.pop_front();
      report.flows++;
    }
  }
}

void Builder::add_counters() {
  for (size_t r = 0; r < in_.host.size() && r < in_.ranks.size(); ++r) {
    traces::Counter counter;
    counter.device = static_cast<uint16_t>(r);
    counter.name = std::string(traces::kActivationBytesCounter);
    for (const HostAction& h : in_.host[r]) {
      if (h.activation_bytes < 0 || h.inner >= 0) continue;
      // The memory is held once the action's GPU work ran, not when the host issued it.
      const ExternalKey key{h.step, static_cast<int>(r), h.index, -1};
      int64_t t = h.end_ns;
      if (auto gpu = gpu_.find(encode(key)); gpu != gpu_.end()) t = gpu->second.end_ns;
      counter.samples.push_back({t, static_cast<double>(h.activation_bytes)});
    }
    if (counter.samples.empty()) continue;
    std::stable_sort(counter.samples.begin(), counter.samples.end(),
                     [](const auto& a, const auto& b) { return a.t_ns < b.t_ns; });
    t_.counters.push_back(std::move(counter));
  }
}

void Builder::add_steps() {
  // A step's window is its GPU work across all ranks; host issue times only where a step left
  // no GPU record (the host runs ahead of the device, so its times would widen the window).
  std::map<int, traces::StepWindow> steps = host_steps_;
  for (const auto& [step, window] : gpu_steps_) steps[step] = window;
  for (const auto& [step, window] : steps) t_.steps.push_back(window);
}

}  // namespace meshscope::capture::cupti::detail
