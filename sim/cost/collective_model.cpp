// NCCL's cost model for collectives, per link tier.
#include "sim/cost/collective_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace meshscope::cost {
namespace {

// NCCL src/graph/tuning.cc, in microseconds: baseLat[algorithm][protocol] and
// hwLat[hardware][algorithm][protocol] for Tree and Ring with LL, LL128, Simple.
constexpr double kBaseLatUs[2][3] = {{4.4, 4.4, 0.0}, {3.6, 10.0, 8.4}};  // tree, ring
constexpr double kHwLatUs[3][2][3] = {
    {{0.52, 1.2, 28}, {0.47, 1.9, 3.4}},  // NVLink
    {{1.0, 1.9, 28}, {1.0, 2.5, 5.7}},    // PCI
    {{5.0, 8.5, 50}, {2.7, 4.0, 9.6}},    // network
};
constexpr int kTree = 0, kRingIdx = 1;

double hw_lat_us(LinkKind k, int algo, int proto) {
  return kHwLatUs[static_cast<int>(k)][algo][proto];
}

// Bus bandwidth of one device's share of a group that spans `span`.
double bus_bandwidth(const Hardware& hw, const GroupSpan& span) {
  const double intra = hw.intra_node.bandwidth_bytes_per_s * hw.intra_node.collective_efficiency;
  if (span.nodes <= 1) return intra;
  // Across nodes every ring (channel) crosses a NIC; with k members per node NCCL drives up to
  // k NICs of that node, each at its own bandwidth.
  const int nics = std::max(1, std::min(span.ranks_per_node, hw.nics_per_node));
  const double inter =
      nics * hw.inter_node.bandwidth_bytes_per_s * hw.inter_node.collective_efficiency;
  return std::min(intra, inter);
}

double protocol_bw(double bus, int algo, int proto, const GroupSpan& span, CollectiveKind kind) {
  const double ppn = span.ranks_per_node;
  if (algo == kRingIdx) {
    if (proto == 0)
      return bus * ((span.nodes > 1 || kind == CollectiveKind::kAllReduce) ? 0.25 : 1.0 / 3.0);
    if (proto == 1) return bus * (ppn < 2 ? 0.7 : 0.92);
    return bus;
  }
  bus *= 0.9;  // tree
  if (proto == 0) return bus / 3.8;
  if (proto == 1) return bus * (span.nodes == 1 ? 7.0 / 9.0 : 0.915);
  return bus;
}

CollectiveTime ring_or_tree(const Hardware& hw, CollectiveKind kind, double bytes,
                            const GroupSpan& span) {
  const int n = span.ranks;
  const int nodes = span.nodes;
  const int nsteps = kind == CollectiveKind::kAllReduce ? 2 * (n - 1) : n - 1;
  const int inter_steps = kind == CollectiveKind::kAllReduce ? 2 * (nodes - 1) : nodes - 1;
  const LinkKind intra_kind = hw.intra_node.kind;
  const LinkKind hw_kind = nodes == 1 ? intra_kind : LinkKind::kNet;
  const double bus = bus_bandwidth(hw, span);
  CollectiveTime best;
  best.seconds = std::numeric_limits<double>::infinity();
  for (int algo : {kTree, kRingIdx}) {
    if (algo == kTree && kind != CollectiveKind::kAllReduce) continue;
    for (int proto = 0; proto < 3; ++proto) {
      const double pbw = protocol_bw(bus, algo, proto, span, kind);
      const double ratio = algo == kRingIdx ? static_cast<double>(n) / nsteps : 0.5;
      const double alg_bw = pbw * ratio;
      double intra_lat = hw_lat_us(intra_kind, algo, proto);
      if (nodes > 1 && proto == 0) intra_lat *= 1.8;
      const double inter_lat = hw_lat_us(LinkKind::kNet, algo, proto);
      double lat = kBaseLatUs[algo][proto];
      if (algo == kRingIdx) {
        lat += (nsteps - inter_steps) * (nodes == 1 ? hw_lat_us(hw_kind, algo, proto) : intra_lat) +
               inter_steps * inter_lat;
        // NCCL's "plateau effect of ring" for large multi-node all-reduces.
        if (proto == 2 && nodes > 1 && kind == CollectiveKind::kAllReduce &&
            bytes >= n / 16.0 * 65536)
          lat *= 1.9;
      } else {
        lat +=
            2 * ((span.ranks_per_node - 1) * intra_lat + std::log2(std::max(1, nodes)) * inter_lat);
      }
      const double t = lat * 1e-6 + bytes / alg_bw;
      if (t < best.seconds) {
        best.seconds = t;
        best.algorithm = algo == kRingIdx ? Algorithm::kRing : Algorithm::kTree;
        best.protocol = static_cast<Protocol>(proto);
        best.bus_bandwidth_bytes_per_s = pbw;
      }
    }
  }
  return best;
}

// Reduce-scatter inside each node, the collective across nodes on 1/k of the data (k NICs in
// parallel), all-gather inside each node.
CollectiveTime hierarchical(const Hardware& hw, CollectiveKind kind, double bytes,
                            const GroupSpan& span) {
  const int k = span.ranks_per_node;
  const GroupSpan intra{k, 1, k};
  const GroupSpan inter{span.nodes, span.nodes, 1};
  CollectiveTime t;
  t.algorithm = Algorithm::kHierarchical;
  const double shard = bytes / k;
  switch (kind) {
    case CollectiveKind::kAllReduce:
      t.seconds = ring_or_tree(hw, CollectiveKind::kReduceScatter, bytes, intra).seconds +
                  ring_or_tree(hw, CollectiveKind::kAllReduce, shard, inter).seconds +
                  ring_or_tree(hw, CollectiveKind::kAllGather, bytes, intra).seconds;
      break;
    case CollectiveKind::kAllGather:
      t.seconds = ring_or_tree(hw, CollectiveKind::kAllGather, shard, inter).seconds +
                  ring_or_tree(hw, CollectiveKind::kAllGather, bytes, intra).seconds;
      break;
    default:
      t.seconds = ring_or_tree(hw, CollectiveKind::kReduceScatter, bytes, intra).seconds +
                  ring_or_tree(hw, CollectiveKind::kReduceScatter, shard, inter).seconds;
      break;
  }
  t.bus_bandwidth_bytes_per_s = bus_factor(kind, span.ranks) * bytes / t.seconds;
  return t;
}

// NCCL's NVLS all-reduce inside one node (Hopper and later, through NVSwitch): the switch reduces
// what each GPU sends and multicasts the result. NCCL models it (src/graph/tuning.cc, 2.2x) with
// a bus bandwidth that does not depend on the group's size, the all-reduce's n / 2(n-1) turning
// it into algorithm bandwidth, and one latency of hwLat[NVLink][NVLS][Simple], 25 us, with no
// base latency; the bus bandwidth is the catalog's, measured by NCCL's maintainers.
constexpr double kNvlsLatencyUs = 25.0;

CollectiveTime nvls_all_reduce(const Hardware& hw, double bytes, const GroupSpan& span) {
  CollectiveTime t;
  t.algorithm = Algorithm::kNvls;
  t.bus_bandwidth_bytes_per_s = hw.intra_node.nvls_bus_bandwidth_bytes_per_s;
  t.seconds = kNvlsLatencyUs * 1e-6 + bus_factor(CollectiveKind::kAllReduce, span.ranks) * bytes /
                                          t.bus_bandwidth_bytes_per_s;
  return t;
}

// Grouped sends to every peer: the intra-node and inter-node parts proceed at once.
CollectiveTime all_to_all(const Hardware& hw, double bytes, const GroupSpan& span) {
  const int n = span.ranks;
  const int k = std::min(span.ranks_per_node, n);
  const double intra_bytes = bytes * (k - 1) / n;
  const double inter_bytes = bytes * (n - k) / n;
  const double intra =
      intra_bytes / (hw.intra_node.bandwidth_bytes_per_s * hw.intra_node.collective_efficiency);
  const double inter =
      inter_bytes / (hw.inter_node.bandwidth_bytes_per_s * hw.inter_node.collective_efficiency);
  const double lat = span.nodes > 1 ? hw.inter_node.latency_ns : hw.intra_node.latency_ns;
  CollectiveTime t;
  t.algorithm = Algorithm::kDirect;
  t.seconds = lat * 1e-9 + std::max(intra, inter);
  t.bus_bandwidth_bytes_per_s = t.seconds > 0 ? bytes * (n - 1) / n / t.seconds : 0;
  return t;
}

}  // namespace

double bus_factor(CollectiveKind kind, int n) {
  if (n <= 1) return 0.0;
  if (kind == CollectiveKind::kAllReduce) return 2.0 * (n - 1) / n;
  return static_cast<double>(n - 1) / n;
}

CollectiveTime collective_time(const Hardware& hw, CollectiveKind kind, double bytes,
                               const GroupSpan& span, const Calibration* calibration) {
  CollectiveTime none;
  if (span.ranks <= 1 || bytes <= 0) return none;
  const LinkFit* fitted = nullptr;
  if (calibration != nullptr) {
    fitted = kind == CollectiveKind::kAllToAll && calibration->all_to_all.bandwidth_bytes_per_s > 0
                 ? &calibration->all_to_all
                 : &calibration->collective;
  }
  if (fitted != nullptr && fitted->bandwidth_bytes_per_s > 0) {
    const LinkFit& f = *fitted;
    CollectiveTime t;
    t.seconds = f.alpha_ns * 1e-9 + bus_factor(kind, span.ranks) * bytes / f.bandwidth_bytes_per_s;
    t.bus_bandwidth_bytes_per_s = f.bandwidth_bytes_per_s;
    return t;
  }
  if (kind == CollectiveKind::kAllToAll) return all_to_all(hw, bytes, span);
  CollectiveTime best = ring_or_tree(hw, kind, bytes, span);
  if (span.nodes > 1 && span.ranks_per_node > 1) {
    const CollectiveTime h = hierarchical(hw, kind, bytes, span);
    if (h.seconds < best.seconds) best = h;
  }
  if (kind == CollectiveKind::kAllReduce && span.nodes == 1 &&
      hw.intra_node.nvls_bus_bandwidth_bytes_per_s > 0) {
    const CollectiveTime n = nvls_all_reduce(hw, bytes, span);
    if (n.seconds < best.seconds) best = n;
  }
  return best;
}

P2pLink p2p_link(const Hardware& hw, bool same_node, const Calibration* calibration) {
  const LinkTier& tier = same_node ? hw.intra_node : hw.inter_node;
  P2pLink link{tier.bandwidth_bytes_per_s, tier.latency_ns, !same_node};
  if (calibration != nullptr && calibration->p2p.bandwidth_bytes_per_s > 0) {
    link.bandwidth_bytes_per_s = calibration->p2p.bandwidth_bytes_per_s;
    link.latency_ns = calibration->p2p.alpha_ns;
  }
  return link;
}

double p2p_seconds(const P2pLink& link, double bytes) {
  return link.latency_ns * 1e-9 + (bytes > 0 ? bytes / link.bandwidth_bytes_per_s : 0.0);
}

double p2p_net_sm_share(const Hardware& hw) {
  if (hw.kind != "gpu" || hw.compute_units <= 0) return 0;
  return std::min(0.49, static_cast<double>(kNcclP2pNetThreadBlocks) / hw.compute_units);
}

}  // namespace meshscope::cost
