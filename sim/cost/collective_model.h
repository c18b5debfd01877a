// Alpha-beta times of collectives and point-to-point transfers, following NCCL's own tuning model
// (src/graph/tuning.cc): time = latency + bytes / algorithm bandwidth, where algorithm bandwidth
// = bus bandwidth x n / steps (ring all-reduce: n / 2(n-1); all-gather, reduce-scatter:
// n / (n-1); tree: 1/2), latency = base + per-step hardware latency per tier, for the LL, LL128
// and Simple protocols; the fastest algorithm/protocol wins, as NCCL's tuner picks it.
#pragma once

#include <array>
#include <string_view>

#include "sim/cost/calibration.h"
#include "sim/cost/hardware.h"
#include "sim/cost/topology.h"
#include "traces/collective.h"

namespace meshscope::cost {

// The collective descriptor's enumerations (traces/collective.h), shared with the schedule, the
// transports and the importers.
using CollectiveKind = traces::CollectiveOp;
// kAuto never comes out of collective_time: the fastest algorithm is picked.
using Algorithm = traces::CollectiveAlgorithm;
enum class Protocol : uint8_t { kLL = 0, kLL128, kSimple, kCount };
inline constexpr std::array<std::string_view, static_cast<size_t>(Protocol::kCount)>
    kProtocolNames = {"LL", "LL128", "Simple"};

// Bytes each rank moves over the bus per byte of buffer: 2(n-1)/n (all-reduce), (n-1)/n
// (all-gather, reduce-scatter, all-to-all) — nccl-tests' busBw convention.
double bus_factor(CollectiveKind kind, int n);

struct CollectiveTime {
  double seconds = 0;
  Algorithm algorithm = Algorithm::kRing;
  Protocol protocol = Protocol::kSimple;
  double bus_bandwidth_bytes_per_s = 0;
};

// `bytes` is the full (unsharded) buffer of one rank: the all-reduce buffer, the all-gather's
// output, the reduce-scatter's input, the all-to-all's send buffer. A group of one rank is free.
// With a calibration that fitted collectives, its alpha/beta replace the catalog model (for an
// all-to-all its own fit where it has one).
CollectiveTime collective_time(const Hardware& hw, CollectiveKind kind, double bytes,
                               const GroupSpan& span, const Calibration* calibration = nullptr);

// Bandwidth and latency of one point-to-point transfer between two devices.
struct P2pLink {
  double bandwidth_bytes_per_s = 0;
  double latency_ns = 0;
  bool inter_node = false;
};
P2pLink p2p_link(const Hardware& hw, bool same_node, const Calibration* calibration = nullptr);
double p2p_seconds(const P2pLink& link, double bytes);

// Thread blocks NCCL runs one large send or receive across the network on: a torch isend/irecv
// outside a batch runs on a two-rank communicator (ProcessGroupNCCL::pointToPoint), to which NCCL
// gives 2 channels for a peer on another node (ncclTopoGetNchannels, NCCL_NCHANNELS_PER_NET_PEER;
// ncclTopoComputeP2pChannels), all of them used by a large operation (scheduleP2pTasksToPlan), a
// thread block each (docs/ACCURACY.md item 33). Inside a node NCCL gives an NVLink pair
// 2 x its NVLinks channels; how many an operation of a given size uses was not checked, so no
// figure is kept for it.
inline constexpr int kNcclP2pNetThreadBlocks = 2;

// The share of a device's processors one pipeline transfer across the network holds while it runs
// or waits (kNcclP2pNetThreadBlocks over its SMs); 0 for a CPU device.
double p2p_net_sm_share(const Hardware& hw);

}  // namespace meshscope::cost
