// CuptiTracer: per-action NVTX range + external id on the rank threads (no locks, no
// allocation once begin_run reserved room), the CUPTI capture around the run, and the build.
#include "profiler/capture/cupti/cupti_tracer.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>

#include "profiler/capture/cupti/external_id.h"
#include "profiler/runtime/clock.h"

namespace meshscope::capture::cupti {

CuptiTracer::CuptiTracer(std::unique_ptr<CuptiApi> api, std::unique_ptr<RangeMarker> marker,
                         std::vector<TracedStream> streams)
    : api_(std::move(api)),
      marker_(std::move(marker)),
      streams_(std::move(streams)),
      capture_(*api_) {}

CuptiTracer::~CuptiTracer() {
  // The capture's last buffers reach it through callbacks the API holds, so the capture stops
  // first (members would destroy it before the API), then the API goes while the capture its
  // callbacks point into is still alive.
  if (capture_.running()) {
    try {
      capture_.stop();
    } catch (...) {
      // Nothing to report to: the run ended without finish().
    }
  }
  api_.reset();
}

void CuptiTracer::begin_run(const RunInfo& run) {
  if (run.mesh == nullptr || run.programs == nullptr) {
    throw std::invalid_argument("CuptiTracer::begin_run: RunInfo needs mesh and programs");
  }
  if (run.mesh->size() > kMaxRanks || run.steps > kMaxSteps) {
    throw std::invalid_argument("CuptiTracer: too many ranks or steps for external ids");
  }
  // An index past its field would spill into the next one and label ops with another action.
  for (int r = 0; r < run.mesh->size(); ++r) {
    const size_t actions = (*run.programs)[r].size();
    const size_t inner = run.inner != nullptr ? (*run.inner)[r].size() : 0;
    if (actions > static_cast<size_t>(kMaxActions) || inner > static_cast<size_t>(kMaxInner)) {
      throw std::invalid_argument(
          "CuptiTracer: rank " + std::to_string(r) + " runs " + std::to_string(actions) +
          " actions and " + std::to_string(inner) + " inner collectives; external ids hold " +
          std::to_string(kMaxActions) + " and " + std::to_string(kMaxInner));
    }
  }
  run_ = run;
  ranks_.assign(run.mesh->size(), RankState{});
  const size_t microbatches = run.schedule != nullptr
                                  ? static_cast<size_t>(std::max(run.schedule->num_microbatches, 1))
                                  : 1;
  for (int r = 0; r < run.mesh->size(); ++r) {
    const size_t program = (*run.programs)[r].size();
    // Each tp collective runs once per microbatch (in its F, or in its B / I) and step.
    const size_t inner = run.inner != nullptr ? (*run.inner)[r].size() * microbatches : 0;
    ranks_[r].actions.reserve(static_cast<size_t>(std::max(run.steps, 1)) * (program + inner));
  }
  // CUPTI first (its NVTX kinds on), then the marker's first NVTX call.
  capture_.start();
  marker_->open();
}

void CuptiTracer::step_begin(int rank, int) {
  RankState& s = ranks_[rank];
  if (s.thread == 0) s.thread = static_cast<uint32_t>(::syscall(SYS_gettid));
}

void CuptiTracer::action_begin(int rank, int step, const ActionInfo& action) {
  RankState& s = ranks_[rank];
  s.current_action = action.index;
  const uint64_t id = encode({step, rank, action.index, -1});
  api_->push_external_id(id);
  marker_->push(action.label, id);
  s.actions.push_back({step, action.index, -1, runtime::host_now_ns(), 0, -1});
}

int CuptiTracer::inner_index(int rank, const InnerInfo& inner) const {
  if (run_.inner == nullptr) return -1;
  const auto& all = (*run_.inner)[rank];
  if (all.empty() || &inner < all.data() || &inner >= all.data() + all.size()) return -1;
  return static_cast<int>(&inner - all.data());
}

void CuptiTracer::inner_begin(int rank, int step, const InnerInfo& inner) {
  RankState& s = ranks_[rank];
  const int index = inner_index(rank, inner);
  const uint64_t id = encode({step, rank, s.current_action, index});
  api_->push_external_id(id);
  marker_->push(inner.label, id);
  s.actions.push_back({step, s.current_action, index, runtime::host_now_ns(), 0, -1});
}

void CuptiTracer::inner_end(int rank, int, const InnerInfo&, int64_t) {
  marker_->pop();
  api_->pop_external_id();
  ranks_[rank].actions.back().end_ns = runtime::host_now_ns();
}

void CuptiTracer::action_end(int rank, int, const ActionInfo& action, const ActionEnd& end) {
  marker_->pop();
  api_->pop_external_id();
  RankState& s = ranks_[rank];
  // The action's own entry is the latest one with inner == -1 (inner entries follow it).
  for (auto it = s.actions.rbegin(); it != s.actions.rend(); ++it) {
    if (it->inner == -1 && it->index == action.index) {
      it->end_ns = runtime::host_now_ns();
      it->activation_bytes = end.activation_bytes;
      break;
    }
  }
}

void CuptiTracer::step_end(int, int) {}

traces::Timeline CuptiTracer::finish() {
  RecordSet records = capture_.stop();
  std::vector<CUstream> traced;
  for (const TracedStream& s : streams_) traced.push_back(s.stream);
  records.dropped_records += api_->dropped_since_read(traced);
  BuildInput in;
  in.records = &records;
  in.clock = &capture_.clock();
  in.programs = run_.programs;
  in.inner = run_.inner;
  in.metadata = run_.metadata;
  in.run = run_.run;
  in.metadata["tracer"] = "cupti";
  if (!run_.backend.empty()) in.metadata["backend"] = run_.backend;
  for (int r = 0; r < static_cast<int>(ranks_.size()); ++r) {
    RankLayout layout;
    layout.name = "rank " + std::to_string(r) + " · " + run_.mesh->describe(r);
    layout.coord = run_.mesh->coord_of(r);
    layout.thread = ranks_[r].thread;
    for (const TracedStream& s : streams_) {
      if (s.rank != r) continue;
      // A stream whose ids cannot be read loses its lane's name, not the run: its ops are still
      // placed by their actions (on a lane named by the stream id they carry), and only ops
      // tied to no action go to the GPU's unattributed device.
      try {
        const StreamKey key = api_->stream_key(s.stream);
        layout.streams.push_back({s.gpu, key.context, key.stream, s.lane, s.kind});
      } catch (const std::exception& e) {
        std::fprintf(stderr, "meshscope: warning: rank %d's %s stream: %s\n", r, s.lane.c_str(),
                     e.what());
      }
    }
    in.ranks.push_back(std::move(layout));
    // Actions cut short by an abort never ended: drop them.
    std::vector<HostAction> done;
    for (const HostAction& h : ranks_[r].actions) {
      if (h.end_ns != 0) done.push_back(h);
    }
    in.host.push_back(std::move(done));
  }
  traces::Timeline timeline = build_timeline(in, &report_);
  if (report_.dropped_records > 0) {
    std::fprintf(stderr,
                 "meshscope: warning: CUPTI dropped %llu activity records; the timeline lacks "
                 "them (the capture's buffers filled faster than they were handed over)\n",
                 static_cast<unsigned long long>(report_.dropped_records));
  }
  if (report_.incomplete_buffers > 0) {
    std::fprintf(stderr,
                 "meshscope: warning: %llu CUPTI activity buffers ended in an incomplete record; "
                 "the records after it are missing (cupti_incomplete_buffers)\n",
                 static_cast<unsigned long long>(report_.incomplete_buffers));
  }
  return timeline;
}

}  // namespace meshscope::capture::cupti
