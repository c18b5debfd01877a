// The links of the event loop: an egress and an ingress port per rank and link tier, the
// transfers in flight through them sharing their bandwidth, and the collectives that hold them
// (engine.h: a transfer takes latency + bytes / rate, the rate being the port bandwidth shared by
// everything on the sender's egress and the receiver's ingress port of its tier).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/engine/event_queue.h"
#include "sim/engine/huge_pages.h"
#include "sim/engine/ports.h"

namespace meshscope::engine {

class Links {
 public:
  // A seq no event carries: the transfer has arrived (its slot is free).
  static constexpr uint64_t kArrived = UINT64_MAX;
  // One cache line. Its SEND is its RECV's Op::aux.
  struct alignas(64) Transfer {
    uint32_t recv_op = 0;
    int32_t src = 0, dst = 0;
    uint8_t tier = 0;
    double remaining = 0;  // bytes still to move
    double rate = 0;       // bytes per ns
    int64_t latency_left = 0;
    int64_t last_ns = 0, start_ns = 0;
    uint64_t seq = kArrived;  // of its latest completion event; earlier ones are stale

    size_t port_out(size_t tiers) const { return out_port(src, tier, tiers); }
    size_t port_in(size_t tiers) const { return out_port(dst, tier, tiers) + 1; }
  };
  static_assert(sizeof(Transfer) == 64);
  // What the event loop needs of a transfer that has arrived.
  struct Arrival {
    uint32_t recv_op;
    int32_t src, dst;
    int64_t start_ns;
  };

  // Completions are pushed to `queue` as EventType::kTransferDone events of the transfer's id.
  Links(const std::vector<LinkSpec>& links, int ranks, EventQueue& queue);

  // Starts moving `bytes` from rank `src` to RECV op `recv_op` of `dst` over link tier `tier`, at
  // `now`.
  void start(uint32_t recv_op, int src, int dst, int tier, int64_t bytes, int64_t now);
  // The transfer of a kTransferDone event: released and returned when `seq` is its latest event,
  // nullopt when a re-timing has superseded the event.
  std::optional<Arrival> arrive(uint32_t id, uint64_t seq, int64_t now);
  // A collective of `rank` starts (+1) or ends (-1) on link tier `tier`: it counts as one more
  // sharer of the rank's two ports of that tier meanwhile.
  void hold(int rank, int tier, int delta, int64_t now);

  // For the event loop's prefetching.
  const Transfer& transfer(uint32_t id) const { return transfers_[id]; }
  size_t out_port(int rank, int tier) const { return out_port(rank, tier, tiers_); }
  size_t tiers() const { return tiers_; }
  const Port& port(size_t i) const { return ports_[i]; }

 private:
  static size_t out_port(int rank, int tier, size_t tiers) {
    return (static_cast<size_t>(rank) * tiers + static_cast<size_t>(tier)) * 2;
  }

  void rerate(uint32_t a, uint32_t b, int64_t now);
  void retime(uint32_t id, int64_t now);
  // ceil(bytes / rate) in ns (0 for no bytes).
  int64_t data_ns(double bytes, double rate);

  EventQueue& queue_;
  size_t tiers_;
  std::vector<int64_t> latency_ns_;   // per tier
  std::vector<double> bytes_per_ns_;  // per tier
  std::vector<Transfer, HugePageAllocator<Transfer>> transfers_;
  std::vector<uint32_t> free_;
  std::vector<Port, HugePageAllocator<Port>>
      ports_;  // (rank, tier) -> egress at 2i, ingress at 2i + 1
  std::vector<uint32_t> touched_;
  double last_bytes_ = -1, last_rate_ = -1, last_data_ns_ = 0;  // retime's last quotient
};

// Inline: the event loop calls these for every transfer.

inline Links::Links(const std::vector<LinkSpec>& links, int ranks, EventQueue& queue)
    : queue_(queue), tiers_(links.size()), ports_(static_cast<size_t>(ranks) * links.size() * 2) {
  for (const LinkSpec& l : links) {
    latency_ns_.push_back(l.latency_ns);
    bytes_per_ns_.push_back(l.bandwidth_bytes_per_s * 1e-9);
  }
}

inline void Links::start(uint32_t recv_op, int src, int dst, int tier, int64_t bytes, int64_t now) {
  uint32_t id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = static_cast<uint32_t>(transfers_.size());
    transfers_.emplace_back();
  }
  Transfer& t = transfers_[id];
  t.recv_op = recv_op;
  t.src = src;
  t.dst = dst;
  t.tier = static_cast<uint8_t>(tier);
  t.remaining = static_cast<double>(bytes);
  t.latency_left = latency_ns_[tier];
  t.rate = 0;
  t.last_ns = t.start_ns = now;
  const auto out = static_cast<uint32_t>(t.port_out(tiers_));
  const auto in = static_cast<uint32_t>(t.port_in(tiers_));
  Port& po = ports_[out];
  Port& pi = ports_[in];
  const bool alone =
      po.active.empty() && pi.active.empty() && po.collectives == 0 && pi.collectives == 0;
  po.active.push_back(id);
  pi.active.push_back(id);
  if (alone) {
    // Nothing else on either port (a pipeline's usual case): the tier's whole rate from now,
    // what rerate() would give it, without its search for other transfers to re-time.
    t.rate = bytes_per_ns_[tier];
    t.seq = queue_.push(now + t.latency_left + data_ns(t.remaining, t.rate),
                        EventType::kTransferDone, id);
    return;
  }
  rerate(out, in, now);
}

inline std::optional<Links::Arrival> Links::arrive(uint32_t id, uint64_t seq, int64_t now) {
  Transfer& t = transfers_[id];
  if (t.seq != seq) return std::nullopt;  // superseded by a re-timing (or arrived)
  t.seq = kArrived;
  const auto out = static_cast<uint32_t>(t.port_out(tiers_));
  const auto in = static_cast<uint32_t>(t.port_in(tiers_));
  ports_[out].active.drop(id);
  ports_[in].active.drop(id);
  free_.push_back(id);
  if (!ports_[out].active.empty() || !ports_[in].active.empty()) rerate(out, in, now);
  return Arrival{t.recv_op, t.src, t.dst, t.start_ns};
}

inline void Links::hold(int rank, int tier, int delta, int64_t now) {
  const auto out = static_cast<uint32_t>(out_port(rank, tier));
  ports_[out].collectives += delta;
  ports_[out + 1].collectives += delta;
  if (!ports_[out].active.empty() || !ports_[out + 1].active.empty()) rerate(out, out + 1, now);
}

// Brings every transfer through the two ports up to `now` and re-times it at its new rate: those
// of port a, then those of port b not also through a.
inline void Links::rerate(uint32_t a, uint32_t b, int64_t now) {
  const PortTransfers& pa = ports_[a].active;
  const PortTransfers& pb = ports_[b].active;
  if (pa.size() <= 1 && pb.size() <= 1) {  // a pipeline's ports: no list needed
    if (!pa.empty()) retime(pa[0], now);
    if (!pb.empty() && (pa.empty() || pb[0] != pa[0])) retime(pb[0], now);
    return;
  }
  touched_.clear();
  for (size_t i = 0; i < pa.size(); ++i) touched_.push_back(pa[i]);
  for (size_t i = 0; i < pb.size(); ++i)
    if (std::find(touched_.begin(), touched_.end(), pb[i]) == touched_.end())
      touched_.push_back(pb[i]);
  for (uint32_t id : touched_) retime(id, now);
}

inline void Links::retime(uint32_t id, int64_t now) {
  Transfer& t = transfers_[id];
  int64_t dt = now - t.last_ns;
  if (t.latency_left > 0) {
    const int64_t use = std::min(dt, t.latency_left);
    t.latency_left -= use;
    dt -= use;
  }
  t.remaining = std::max(0.0, t.remaining - static_cast<double>(dt) * t.rate);
  t.last_ns = now;
  const Port& out = ports_[t.port_out(tiers_)];
  const Port& in = ports_[t.port_in(tiers_)];
  const double bytes_per_ns = bytes_per_ns_[t.tier];
  t.rate = std::min(out.share(bytes_per_ns), in.share(bytes_per_ns));
  t.seq = queue_.push(now + t.latency_left + data_ns(t.remaining, t.rate), EventType::kTransferDone,
                      id);
}

// Transfers of one stage boundary move the same bytes at the same rate: the last quotient is
// reused (the same value; a division costs more than the rest of the re-timing).
inline int64_t Links::data_ns(double bytes, double rate) {
  if (bytes != last_bytes_ || rate != last_rate_) {
    last_bytes_ = bytes;
    last_rate_ = rate;
    last_data_ns_ = bytes > 0 ? std::ceil(bytes / rate) : 0.0;
  }
  return static_cast<int64_t>(last_data_ns_);
}

}  // namespace meshscope::engine
