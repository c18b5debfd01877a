// Detecting identical replicas and simulating them once.
#include "sim/engine/symmetry.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "sim/schedule/placement.h"

namespace meshscope::engine {
namespace {

using schedule::Action;

bool same_action(const mesh::Mesh& m, int r, const Action& a, int rep, const Action& b) {
  if (a.kind != b.kind || a.group != b.group || a.stage != b.stage ||
      a.microbatch != b.microbatch || a.bytes != b.bytes)
    return false;
  if ((a.peer < 0) != (b.peer < 0)) return false;
  if (a.peer < 0) return true;
  const mesh::MeshCoord c = m.coord_of(r), pc = m.coord_of(a.peer), rc = m.coord_of(rep),
                        rpc = m.coord_of(b.peer);
  return pc.dp == c.dp && pc.tp == c.tp && rpc.dp == rc.dp && rpc.tp == rc.tp && pc.pp == rpc.pp;
}

}  // namespace

int representative_of(const mesh::MeshShape& shape, int rank) {
  const mesh::Mesh m(shape);
  mesh::MeshCoord c = m.coord_of(rank);
  c.dp = 0;
  c.tp = 0;
  return m.rank_of(c);
}

bool replicas_symmetric(const EngineInput& in) {
  const schedule::Schedule& s = *in.schedule;
  const mesh::Mesh m(s.mesh);
  if (static_cast<int>(s.ranks.size()) != m.size()) return false;
  for (int r = 0; r < m.size(); ++r) {
    const int rep = representative_of(s.mesh, r);
    if (rep == r) continue;
    const auto& mine = s.ranks[r];
    const auto& theirs = s.ranks[rep];
    if (mine.size() != theirs.size()) return false;
    for (size_t i = 0; i < mine.size(); ++i) {
      const Action& a = mine[i];
      const Action& b = theirs[i];
      if (!same_action(m, r, a, rep, b)) return false;
      if (schedule::is_send(a.kind) && in.tier_of) {
        const auto pa =
            a.peer >= 0 ? std::optional<int>(a.peer) : schedule::derived_peer(s, m, r, a);
        const auto pb =
            b.peer >= 0 ? std::optional<int>(b.peer) : schedule::derived_peer(s, m, rep, b);
        if (!pa || !pb || in.tier_of(r, *pa) != in.tier_of(rep, *pb)) return false;
      }
      if (schedule::is_collective(a.kind) && in.collective_ns &&
          in.collective_ns(r, a) != in.collective_ns(rep, b))
        return false;
      if (schedule::is_compute(a.kind) && in.compute_action_ns &&
          in.compute_action_ns(r, a) != in.compute_action_ns(rep, b))
        return false;
      if (schedule::is_collective(a.kind) && in.collective_tier &&
          in.collective_tier(r, a) != in.collective_tier(rep, b))
        return false;
      if (schedule::is_collective(a.kind) && in.collective_sm_share &&
          in.collective_sm_share(r, a) != in.collective_sm_share(rep, b))
        return false;
      if (schedule::is_collective(a.kind) && in.collective_overlap) {
        const CollectiveOverlap ea = in.collective_overlap(r, a);
        const CollectiveOverlap eb = in.collective_overlap(rep, b);
        if (ea.lead_ns != eb.lead_ns || ea.tail_ns != eb.tail_ns ||
            ea.charge_share != eb.charge_share || ea.release_ns != eb.release_ns ||
            ea.hide_layers != eb.hide_layers)
          return false;
      }
    }
  }
  return true;
}

EngineResult simulate_symmetric(const EngineInput& in, const SymmetricOptions& options) {
  if (!replicas_symmetric(in))
    throw std::invalid_argument(
        "simulate: replicas differ (schedule, links or collective costs); "
        "simulate the full mesh");
  const schedule::Schedule& s = *in.schedule;
  const mesh::Mesh full(s.mesh);
  const mesh::MeshShape reduced_shape{1, s.mesh.pp, 1};
  const mesh::Mesh reduced(reduced_shape);
  schedule::Schedule rs;
  rs.name = s.name;
  rs.mesh = reduced_shape;
  rs.num_stages = s.num_stages;
  rs.num_microbatches = s.num_microbatches;
  rs.stage_owner = s.stage_owner;
  std::vector<int> original(reduced.size());
  for (int p = 0; p < reduced.size(); ++p) {
    original[p] = full.rank_of({0, p, 0});
    std::vector<Action> acts = s.ranks[original[p]];
    for (Action& a : acts)
      if (a.peer >= 0) a.peer = full.coord_of(a.peer).pp;
    rs.ranks.push_back(std::move(acts));
  }
  EngineInput rin = in;
  rin.schedule = &rs;
  if (in.tier_of) rin.tier_of = [&](int a, int b) { return in.tier_of(original[a], original[b]); };
  if (in.collective_ns)
    rin.collective_ns = [&](int r, const Action& a) { return in.collective_ns(original[r], a); };
  if (in.compute_action_ns)
    rin.compute_action_ns = [&](int r, const Action& a) {
      return in.compute_action_ns(original[r], a);
    };
  if (in.collective_tier)
    rin.collective_tier = [&](int r, const Action& a) {
      return in.collective_tier(original[r], a);
    };
  if (in.collective_sm_share)
    rin.collective_sm_share = [&](int r, const Action& a) {
      return in.collective_sm_share(original[r], a);
    };
  if (in.collective_overlap)
    rin.collective_overlap = [&](int r, const Action& a) {
      return in.collective_overlap(original[r], a);
    };
  return simulate_representatives(rin, s.mesh, options);
}

EngineResult simulate_representatives(const EngineInput& reduced, const mesh::MeshShape& shape,
                                      const SymmetricOptions& options) {
  const mesh::Mesh full(shape);
  EngineResult res = simulate(reduced);
  std::vector<RankStats> stats(full.size());
  for (int r = 0; r < full.size(); ++r) stats[r] = res.ranks[full.coord_of(r).pp];
  res.ranks = std::move(stats);
  if (reduced.build_timeline) {
    // Devices carry their full-mesh rank, name and coordinate.
    if (options.expand_timeline) {
      res.timeline = expand_replicas(res.timeline, shape);
    } else {
      for (traces::Device& d : res.timeline.devices) {
        const int r = full.rank_of({0, d.rank, 0});
        d.rank = r;
        d.coord = full.coord_of(r);
        d.name = "rank " + std::to_string(r) + " \u00b7 " + full.describe(r);
      }
      res.timeline.run.mesh = traces::MeshExtent{shape.dp, shape.pp, shape.tp};
      res.timeline.run.replicas_simulated_once = true;
      res.timeline.metadata["mesh"] = mesh::to_string(shape);
      res.timeline.metadata["replicas"] =
          "simulated once: devices stand for their dp x tp replicas";
    }
  }
  return res;
}

traces::Timeline expand_replicas(const traces::Timeline& reduced,
                                 const mesh::MeshShape& full_shape) {
  const mesh::Mesh full(full_shape);
  if (static_cast<int>(reduced.devices.size()) != full_shape.pp)
    throw std::invalid_argument("expand_replicas: timeline has " +
                                std::to_string(reduced.devices.size()) +
                                " devices, expected pp = " + std::to_string(full_shape.pp));
  traces::Timeline t;
  t.strings = reduced.strings;
  t.metadata = reduced.metadata;
  t.metadata["mesh"] = mesh::to_string(full_shape);
  t.run = reduced.run;
  t.run.mesh = traces::MeshExtent{full_shape.dp, full_shape.pp, full_shape.tp};
  t.steps = reduced.steps;
  // Spans of reduced device p start at first[p]; they are sorted by device.
  std::vector<uint32_t> first(reduced.devices.size() + 1, 0);
  for (const traces::Span& sp : reduced.spans) ++first[sp.device + 1];
  for (size_t p = 0; p < reduced.devices.size(); ++p) first[p + 1] += first[p];
  std::vector<uint32_t> new_first(full.size());
  t.spans.reserve(reduced.spans.size() * (full.size() / full_shape.pp));
  for (int r = 0; r < full.size(); ++r) {
    const int p = full.coord_of(r).pp;
    const traces::Device& src = reduced.devices[p];
    const uint16_t d = t.add_device(r, "rank " + std::to_string(r) + " \u00b7 " + full.describe(r),
                                    full.coord_of(r));
    t.devices[d].lanes = src.lanes;
    new_first[r] = static_cast<uint32_t>(t.spans.size());
    for (uint32_t i = first[p]; i < first[p + 1]; ++i) {
      traces::Span sp = reduced.spans[i];
      sp.device = d;
      t.spans.push_back(sp);
    }
    // Device p's collectives, in span order, for this replica.
    auto c = std::lower_bound(
        reduced.collectives.begin(), reduced.collectives.end(), first[p],
        [](const traces::SpanCollective& x, uint32_t span) { return x.span < span; });
    for (; c != reduced.collectives.end() && c->span < first[p + 1]; ++c)
      t.collectives.push_back({new_first[r] + (c->span - first[p]), c->collective});
    // Its waits likewise (the engine records none today; kept so the copy stays whole).
    auto w =
        std::lower_bound(reduced.waits.begin(), reduced.waits.end(), first[p],
                         [](const traces::SpanWait& x, uint32_t span) { return x.span < span; });
    for (; w != reduced.waits.end() && w->span < first[p + 1]; ++w)
      t.waits.push_back({new_first[r] + (w->span - first[p]), w->wait_ns});
    for (const traces::Counter& c : reduced.counters)
      if (c.device == p) {
        traces::Counter cc = c;
        cc.device = d;
        t.counters.push_back(std::move(cc));
      }
  }
  // A flow from device p's span to device q's: in replica (dp, tp) it joins the same replica's
  // ranks.
  for (int r = 0; r < full.size(); ++r) {
    const mesh::MeshCoord c = full.coord_of(r);
    for (const traces::Flow& f : reduced.flows) {
      const int pf = reduced.spans[f.from].device;
      if (pf != c.pp) continue;
      const int pt = reduced.spans[f.to].device;
      const int to_rank = full.rank_of({c.dp, pt, c.tp});
      t.flows.push_back(
          {new_first[r] + (f.from - first[pf]), new_first[to_rank] + (f.to - first[pt])});
    }
  }
  return t;
}

}  // namespace meshscope::engine
