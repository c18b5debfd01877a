// Layout: magic, then devices (rank, name, coord, lanes), strings, spans (raw), flows (raw),
// counters, steps (raw), metadata, the run descriptor, collectives (raw), waits (raw), origins
// (raw) and their args store (bytes, ends). Spans keep their string indices, so strings go first in
// order.
#include "traces/timeline_codec.h"

#include <stdexcept>

#include "traces/byte_codec.h"

namespace meshscope::traces {
namespace {

constexpr uint32_t kMagic = 0x4d534c35;  // "MSL5": the run's cores, GPU, backend, replicas, config

void put_run(ByteWriter& w, const RunDescriptor& run) {
  w.put(run.source);
  w.put_string(run.backend);
  w.put(run.mesh);
  w.put_string(run.family);
  w.put_string(run.schedule);
  w.put<int32_t>(run.microbatches);
  w.put<int32_t>(run.stages);
  w.put<int32_t>(run.virtual_stages);
  w.put(run.workload);
  w.put_string(run.hardware);
  w.put<int32_t>(run.cores);
  w.put_string(run.gpu);
  w.put_string(run.process_group_backend);
  w.put<uint8_t>(run.replicas_simulated_once ? 1 : 0);
  w.put_string(run.sim_config);
}

template <typename Bad>
RunDescriptor get_run(ByteReader& r, const Bad& bad) {
  RunDescriptor run;
  run.source = r.get<RunSource>();
  if (static_cast<size_t>(run.source) >= kRunSourceNames.size()) bad("run source");
  run.backend = r.get_string();
  run.mesh = r.get<MeshExtent>();
  run.family = r.get_string();
  run.schedule = r.get_string();
  run.microbatches = r.get<int32_t>();
  run.stages = r.get<int32_t>();
  run.virtual_stages = r.get<int32_t>();
  run.workload = r.get<WorkloadDescriptor>();
  if (static_cast<size_t>(run.workload.kind) >= kModelKindNames.size()) bad("model kind");
  run.hardware = r.get_string();
  run.cores = r.get<int32_t>();
  run.gpu = r.get_string();
  run.process_group_backend = r.get_string();
  const auto once = r.get<uint8_t>();
  if (once > 1) bad("replicas flag");
  run.replicas_simulated_once = once == 1;
  run.sim_config = r.get_string();
  return run;
}

bool valid(const Collective& c) {
  return static_cast<size_t>(c.op) < kCollectiveOpNames.size() &&
         static_cast<size_t>(c.group) < kGroupKindNames.size() &&
         static_cast<size_t>(c.algorithm) < kCollectiveAlgorithmNames.size() && c.ranks >= 0 &&
         c.ranks <= kMaxGroupRanks && c.first_rank >= -1 && c.rank_stride >= 0;
}

}  // namespace

std::string encode_timeline(const Timeline& t) {
  ByteWriter w;
  w.put(kMagic);
  w.put<uint64_t>(t.devices.size());
  for (const Device& d : t.devices) {
    w.put<int32_t>(d.rank);
    w.put_string(d.name);
    w.put(d.coord);
    w.put<uint64_t>(d.lanes.size());
    for (const Lane& l : d.lanes) {
      w.put_string(l.name);
      w.put(l.kind);
    }
  }
  w.put<uint64_t>(t.strings.size());
  for (size_t i = 0; i < t.strings.size(); ++i)
    w.put_string(t.strings.get(static_cast<uint32_t>(i)));
  w.put_vector(t.spans);
  w.put_vector(t.flows);
  w.put<uint64_t>(t.counters.size());
  for (const Counter& c : t.counters) {
    w.put(c.device);
    w.put_string(c.name);
    w.put_vector(c.samples);
  }
  w.put_vector(t.steps);
  w.put<uint64_t>(t.metadata.size());
  for (const auto& [k, v] : t.metadata) {
    w.put_string(k);
    w.put_string(v);
  }
  put_run(w, t.run);
  w.put_vector(t.collectives);
  w.put_vector(t.waits);
  w.put_vector(t.origins);
  w.put_string(t.origin_args.raw_bytes());
  w.put_vector(t.origin_args.raw_ends());
  return w.take();
}

Timeline decode_timeline(std::string_view bytes) {
  ByteReader r(bytes, "timeline bytes");
  auto bad = [&](const std::string& why) {
    throw std::runtime_error("timeline bytes: " + why + " at byte " + std::to_string(r.offset()));
  };
  if (r.get<uint32_t>() != kMagic) bad("not an encoded timeline");
  Timeline t;
  const uint64_t devices = r.get_count(4 + 8 + sizeof(MeshCoord) + 8);
  for (uint64_t i = 0; i < devices; ++i) {
    Device d;
    d.rank = r.get<int32_t>();
    d.name = r.get_string();
    d.coord = r.get<MeshCoord>();
    const uint64_t lanes = r.get_count(9);
    for (uint64_t j = 0; j < lanes; ++j) {
      Lane l;
      l.name = r.get_string();
      l.kind = r.get<LaneKind>();
      if (static_cast<size_t>(l.kind) >= static_cast<size_t>(LaneKind::kCount)) bad("lane kind");
      d.lanes.push_back(std::move(l));
    }
    t.devices.push_back(std::move(d));
  }
  const uint64_t strings = r.get_count(8);
  for (uint64_t i = 0; i < strings; ++i) {
    const std::string s = r.get_string();
    if (t.strings.intern(s) != i) bad("string table entry " + std::to_string(i) + " repeats");
  }
  t.spans = r.get_vector<Span>();
  for (const Span& s : t.spans) {
    if (s.device >= t.devices.size() || s.lane >= t.devices[s.device].lanes.size() ||
        s.name >= t.strings.size() || static_cast<size_t>(s.kind) >= kSpanKindNames.size() ||
        static_cast<size_t>(s.phase) >= kPhaseNames.size()) {
      bad("a span refers to a device, lane, string or kind that does not exist");
    }
  }
  t.flows = r.get_vector<Flow>();
  for (const Flow& f : t.flows) {
    if (f.from >= t.spans.size() || f.to >= t.spans.size() || f.category >= t.strings.size()) {
      bad("a flow refers to no span or string");
    }
  }
  const uint64_t counters = r.get_count(2 + 8 + 8);
  for (uint64_t i = 0; i < counters; ++i) {
    Counter c;
    c.device = r.get<uint16_t>();
    c.name = r.get_string();
    c.samples = r.get_vector<CounterSample>();
    if (c.device >= t.devices.size()) bad("a counter refers to no device");
    t.counters.push_back(std::move(c));
  }
  t.steps = r.get_vector<StepWindow>();
  const uint64_t entries = r.get_count(16);
  for (uint64_t i = 0; i < entries; ++i) {
    std::string k = r.get_string();
    t.metadata[std::move(k)] = r.get_string();
  }
  t.run = get_run(r, bad);
  t.collectives = r.get_vector<SpanCollective>();
  for (size_t i = 0; i < t.collectives.size(); ++i) {
    const SpanCollective& c = t.collectives[i];
    if (c.span >= t.spans.size() || (i > 0 && t.collectives[i - 1].span >= c.span) ||
        !valid(c.collective)) {
      bad("collective " + std::to_string(i) + " names no span, is out of order or has no kind");
    }
  }
  t.waits = r.get_vector<SpanWait>();
  for (size_t i = 0; i < t.waits.size(); ++i) {
    const SpanWait& w = t.waits[i];
    if (w.span >= t.spans.size() || (i > 0 && t.waits[i - 1].span >= w.span) || w.wait_ns <= 0) {
      bad("wait " + std::to_string(i) + " names no span, is out of order or is not positive");
    }
  }
  t.origins = r.get_vector<SpanOrigin>();
  std::string args_bytes = r.get_string();
  if (!t.origin_args.assign(std::move(args_bytes), r.get_vector<uint64_t>())) {
    bad("the origin args store is not a list of offsets");
  }
  for (size_t i = 0; i < t.origins.size(); ++i) {
    const SpanOrigin& o = t.origins[i];
    if (o.span >= t.spans.size() || o.args >= t.origin_args.size() ||
        (i > 0 && t.origins[i - 1].span >= o.span)) {
      bad("origin " + std::to_string(i) + " refers to no span or args, or is out of order");
    }
  }
  if (!r.done()) bad("trailing bytes");
  return t;
}

}  // namespace meshscope::traces
