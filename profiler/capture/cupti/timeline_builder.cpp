// The Timeline builder, GPU side: devices and lanes, GPU ops labelled with their actions, CUDA
// API calls and synchronisation waits on the host lanes, foreign NVTX ranges as annotations.
#include "profiler/capture/cupti/timeline_builder.h"

#include <string>

#include "profiler/capture/cupti/builder_internal.h"
#include "sim/schedule/action_collective.h"
#include "traces/analysis.h"

namespace meshscope::capture::cupti {
namespace detail {
namespace {

using traces::LaneKind;
using traces::Span;
using traces::SpanKind;

constexpr std::string_view kCopyNames[] = {"memcpy", "memcpy HtoD", "memcpy DtoH", "memcpy DtoD",
                                           "memcpy PtoP"};
constexpr std::string_view kSyncNames[] = {"wait: unknown", "wait: event synchronize",
                                           "wait: stream wait event", "wait: stream synchronize",
                                           "wait: context synchronize"};

// "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", possibly with a
// return type in front ("void ncclKernel_...").
bool is_nccl_kernel(const std::string& name) {
  return name.rfind("nccl", 0) == 0 || name.rfind("void nccl", 0) == 0;
}

// comm: the span kind of the communication the op belongs to (kCount when it belongs to none).
SpanKind span_kind_for(const GpuOp& op, SpanKind comm) {
  const bool in_comm = comm != SpanKind::kCount;
  switch (op.kind) {
    case GpuOpKind::kKernel:
      if (in_comm) return comm;
      return is_nccl_kernel(op.name) ? SpanKind::kCollective : SpanKind::kCompute;
    case GpuOpKind::kMemcpy:
      return in_comm ? comm : SpanKind::kMemcpy;
    default:
      return SpanKind::kMemset;
  }
}

}  // namespace

Builder::Builder(const BuildInput& in) : in_(in), labeler_(*in.records, in.nvtx_domain) {}

const ActionInfo* Builder::action_of(const ExternalKey& k) const {
  if (in_.programs == nullptr || k.rank < 0 || k.rank >= static_cast<int>(in_.programs->size()) ||
      k.rank >= static_cast<int>(in_.ranks.size())) {
    return nullptr;
  }
  const auto& program = (*in_.programs)[k.rank];
  return k.index >= 0 && k.index < static_cast<int>(program.size()) ? &program[k.index] : nullptr;
}

const InnerInfo* Builder::inner_of(const ExternalKey& k) const {
  if (k.inner < 0 || in_.inner == nullptr || k.rank >= static_cast<int>(in_.inner->size())) {
    return nullptr;
  }
  const auto& inner = (*in_.inner)[k.rank];
  return k.inner < static_cast<int>(inner.size()) ? &inner[k.inner] : nullptr;
}

void Builder::note_step(std::map<int, traces::StepWindow>& steps, int step, int64_t b, int64_t e) {
  auto [it, fresh] = steps.try_emplace(step, traces::StepWindow{b, e});
  if (!fresh) {
    it->second.begin_ns = std::min(it->second.begin_ns, b);
    it->second.end_ns = std::max(it->second.end_ns, e);
  }
}

void Builder::add_devices() {
  for (size_t r = 0; r < in_.ranks.size(); ++r) {
    const RankLayout& layout = in_.ranks[r];
    const uint16_t d = t_.add_device(static_cast<int>(r), layout.name, layout.coord);
    for (const StreamLane& s : layout.streams) {
      const StreamAt at{s.device, s.context, s.stream};
      lanes_[{d, at}] = t_.add_lane(d, s.lane, s.kind);
      stream_rank_[at] = static_cast<int>(r);
    }
    host_lane_.push_back(t_.add_lane(d, "host", LaneKind::kHost));
    api_lane_.push_back(t_.add_lane(d, "cuda api", LaneKind::kHost));
    if (layout.thread != 0) thread_rank_[layout.thread] = static_cast<int>(r);
  }
}

uint16_t Builder::lane_for(uint16_t device, const GpuOp& op, LaneKind kind) {
  auto [it, fresh] = lanes_.try_emplace({device, {op.device, op.context, op.stream}}, 0);
  if (fresh) it->second = t_.add_lane(device, "stream " + std::to_string(op.stream), kind);
  return it->second;
}

uint16_t Builder::unattributed_device(uint32_t gpu) {
  auto [it, fresh] = unattributed_.try_emplace(gpu, 0);
  if (fresh) {
    it->second = t_.add_device(-1, "GPU " + std::to_string(gpu) + " (unattributed)");
  }
  return it->second;
}

void Builder::add_gpu_ops(BuildReport& report) {
  for (const GpuOp& op : in_.records->ops) {
    const Label label = labeler_.label(op.correlation);
    const ActionInfo* action = label.key ? action_of(*label.key) : nullptr;
    const InnerInfo* inner = label.key ? inner_of(*label.key) : nullptr;
    SpanKind comm = SpanKind::kCount;
    if (inner != nullptr) {
      comm = inner->span_kind;
    } else if (action != nullptr && traces::is_communication(action->span_kind)) {
      comm = action->span_kind;
    }
    Span s;
    s.begin_ns = in_.clock->to_host(op.begin_ns);
    s.end_ns = in_.clock->to_host(op.end_ns);
    s.kind = span_kind_for(op, comm);
    s.name = op.kind == GpuOpKind::kKernel
                 ? t_.strings.intern(op.name)
                 : t_.strings.intern(op.kind == GpuOpKind::kMemset
                                         ? std::string_view("memset")
                                         : kCopyNames[static_cast<size_t>(op.copy)]);
    if (op.kind != GpuOpKind::kKernel) s.bytes = op.bytes;

    auto by_stream = stream_rank_.find({op.device, op.context, op.stream});
    if (action != nullptr) {
      s.device = static_cast<uint16_t>(label.key->rank);
      s.stage = static_cast<int16_t>(action->action.stage);
      s.microbatch = action->action.microbatch;
      s.phase = action->phase;
      (label.source == LabelSource::kExternalId ? report.by_external_id : report.by_nvtx)++;
    } else if (by_stream != stream_rank_.end()) {
      s.device = static_cast<uint16_t>(by_stream->second);
      report.unlabelled++;
    } else {
      s.device = unattributed_device(op.device);
      report.unattributed++;
    }
    const LaneKind lane_kind =
        traces::is_communication(s.kind) ? LaneKind::kComm : LaneKind::kCompute;
    s.lane = lane_for(s.device, op, lane_kind);
    if (action == nullptr) {
      t_.add_span(s);
      continue;
    }
    ActionGpu& work = gpu_[encode(*label.key)];
    if (traces::is_communication(s.kind) && !work.comm_bytes_given && s.bytes == 0) {
      s.bytes = inner != nullptr ? inner->bytes : action->bytes;  // payload once per action
      work.comm_bytes_given = true;
    }
    const uint32_t index = t_.add_span(s);
    if (s.kind == SpanKind::kCollective) {
      if (inner != nullptr) {
        t_.set_collective(index,
                          traces::Collective{.op = inner->op,
                                             .group = inner->group,
                                             .bytes = inner->bytes,
                                             .algorithm = traces::CollectiveAlgorithm::kAuto});
      } else if (const auto c = schedule::collective_of(action->action, action->bytes)) {
        t_.set_collective(index, *c);
      }
    }
    if (s.begin_ns < work.begin_ns) {
      work.begin_ns = s.begin_ns;
      work.first_span = index;
      work.lane = s.lane;
    }
    if (s.end_ns > work.end_ns) {
      work.end_ns = s.end_ns;
      work.last_span = index;
    }
    if (traces::is_device_activity(s.kind))
      note_step(gpu_steps_, label.key->step, s.begin_ns, s.end_ns);
  }
}

void Builder::add_thread_span(uint32_t thread, const std::vector<uint16_t>& lanes, int64_t begin,
                              int64_t end, SpanKind kind, std::string_view name) {
  auto rank = thread_rank_.find(thread);
  if (rank == thread_rank_.end()) return;
  Span s;
  s.begin_ns = in_.clock->to_host(begin);
  s.end_ns = in_.clock->to_host(end);
  s.kind = kind;
  s.name = t_.strings.intern(name);
  s.device = static_cast<uint16_t>(rank->second);
  s.lane = lanes[rank->second];
  t_.add_span(s);
}

void Builder::add_api_calls() {
  std::unordered_map<uint32_t, const ApiCall*> by_correlation;
  for (const ApiCall& call : in_.records->api_calls) {
    by_correlation[call.correlation] = &call;
    add_thread_span(call.thread, api_lane_, call.begin_ns, call.end_ns, SpanKind::kHost, call.name);
  }
  for (const SyncWait& w : in_.records->syncs) {
    auto call = by_correlation.find(w.correlation);
    if (call == by_correlation.end()) continue;
    add_thread_span(call->second->thread, host_lane_, w.begin_ns, w.end_ns, SpanKind::kHost,
                    kSyncNames[w.type < std::size(kSyncNames) ? w.type : 0]);
  }
}

void Builder::add_foreign_ranges() {
  for (const NvtxRange& r : labeler_.ranges()) {
    if (r.domain == in_.nvtx_domain) continue;  // ours: the host actions already show them
    add_thread_span(r.thread, host_lane_, r.begin_ns, r.end_ns, SpanKind::kAnnotation, r.name);
  }
}

traces::Timeline Builder::run(BuildReport& report) {
  t_.metadata = in_.metadata;
  t_.run = in_.run;
  add_devices();
  add_gpu_ops(report);
  add_api_calls();
  add_foreign_ranges();
  add_host_actions();
  add_action_annotations();
  add_flows(report);
  add_counters();
  add_steps();
  report.dropped_records = in_.records->dropped_records;
  report.untimed_records = in_.records->untimed_records;
  report.incomplete_buffers = in_.records->incomplete_buffers;
  report.unmatched_markers = labeler_.unmatched_markers();
  // What the capture saw, so a reader (scripts/gpu-check.sh) can tell a trace that recorded
  // nothing, or labelled nothing, from a good one.
  auto count = [&](const char* key, uint64_t n) { t_.metadata[key] = std::to_string(n); };
  count("cupti_dropped_records", report.dropped_records);
  count("cupti_untimed_records", report.untimed_records);
  count("cupti_buffers", in_.records->buffers);
  count("cupti_incomplete_buffers", report.incomplete_buffers);
  count("cupti_gpu_ops", in_.records->ops.size());
  count("cupti_ops_by_external_id", report.by_external_id);
  count("cupti_ops_by_nvtx", report.by_nvtx);
  count("cupti_ops_unlabelled", report.unlabelled);
  count("cupti_unattributed_ops", report.unattributed);
  count("cupti_nvtx_ranges", labeler_.ranges().size());
  t_.metadata["clock_pairs"] = std::to_string(in_.clock->size());
  t_.metadata["clock_drift_ppm"] = std::to_string(in_.clock->drift_ppm());
  traces::add_idle_spans(t_);
  t_.sort_spans();
  return std::move(t_);
}

}  // namespace detail

traces::Timeline build_timeline(const BuildInput& in, BuildReport* report) {
  BuildReport local;
  BuildReport& out = report != nullptr ? *report : local;
  out = BuildReport{};
  detail::Builder builder(in);
  return builder.run(out);
}

}  // namespace meshscope::capture::cupti
