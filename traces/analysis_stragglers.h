// Stragglers: for each collective that several ranks ran, which rank arrived last and how long
// the others waited for it.
//
//   instance   The k-th collective span (kCollective) of one name on each device of one group:
//              ranks issue their collectives in the same order, as NCCL requires, so the k-th
//              all-reduce of a name on every rank of a group is one collective. The group is its
//              members where the trace lists them (an imported NCCL kernel's "Process Group
//              Ranks": Collective::first_rank), else the span's group kind (its collective
//              record) and the device's mesh coordinates: the tp all-reduces of two dp replicas
//              are two collectives. Where neither is known (most imported traces), every
//              device's k-th span of the name is taken as one collective. Instances on fewer than
//              two devices are left out, and so is every instance of a name (and group) whose
//              devices ran it a different number of times, or that more devices ran than its
//              group has members (`unpaired`): their k-th spans are not one collective.
//   arrival    When each device reached the span: its begin, less the wait recorded for it
//              (Timeline::waits; meshscope's own runs start a collective's span once every
//              member has arrived, so the wait shows as idle). The last arriver is the device
//              that arrived latest (the first in device order on ties).
//   wait       last arrival − own arrival, for every other device: the time its kernel sat in
//              the collective before its peer joined. Exact for traces on one clock (meshscope's
//              own, or per-rank files aligned by `load_traces`; their residual skew bounds the
//              error).
//   transfers  A send -> recv flow between two ranks (a pipeline's activations and gradients)
//              whose recv end covers the receive: a kRecv span or an annotation range (torch's
//              gloo:recv), not a host op that only posts one (c10d::recv_ returns at once); its
//              send end a kSend span, an annotation range, or the host op that posted the send
//              (torch's c10d::send, which the importer pairs with gloo:recv: gloo's own send
//              range opens only as that op returns): the receiver posted its recv at the recv's
//              begin, less its recorded wait (as above); when the send began later, the sender is
//              the straggler and the receiver waited send begin − recv posted. A recv posted after
//              its send began waited for nobody (0).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "traces/timeline.h"

namespace meshscope::traces {

struct CollectiveInstance {
  std::string name;
  int64_t occurrence = 0;       // k: the k-th of this name on each device (from 0)
  std::vector<uint32_t> spans;  // one per device taking part, in device order
  uint16_t last_device = 0;
  int64_t last_arrival_ns = 0;
  int64_t max_wait_ns = 0;    // of the earliest arriver
  int64_t total_wait_ns = 0;  // Σ over the others
};

struct TransferWait {
  uint32_t send = 0, recv = 0;  // spans
  uint16_t sender = 0, receiver = 0;
  int64_t wait_ns = 0;  // max(0, send begin − recv posted)
};

struct StragglerDevice {
  uint16_t device = 0;
  int rank = 0;
  std::string name;
  int64_t collectives = 0;
  int64_t times_last = 0;          // instances it arrived last at
  int64_t waited_ns = 0;           // Σ its waits for others
  int64_t made_wait_ns = 0;        // Σ the others' waits at instances it arrived last at
  int64_t recvs = 0;               // transfers it received
  int64_t recv_waited_ns = 0;      // Σ its recvs' waits for late senders
  int64_t late_sends = 0;          // its sends that began after their recv was posted
  int64_t made_recvs_wait_ns = 0;  // Σ the receivers' waits for those sends
};

// A collective the devices that ran it ran a different number of times: left out of `instances`.
struct UnpairedCollective {
  std::string name;
  std::vector<std::pair<uint16_t, int64_t>> counts;  // (device, its spans of it), device order
  // > 0: the devices ran it equally often, but are more than its group's members (its size named
  // by the trace, Collective::ranks, its members not); 0: they ran it a different number of times.
  int group_ranks = 0;
};

struct StragglerAnalysis {
  std::vector<CollectiveInstance> instances;  // in order of the last arrival
  std::vector<UnpairedCollective> unpaired;   // by name
  std::vector<TransferWait> transfers;        // in flow order
  std::vector<StragglerDevice> devices;       // devices taking part, in device order
};

StragglerAnalysis stragglers(const Timeline& t);
// Whether flow f is a transfer in the sense above.
bool is_transfer_flow(const Timeline& t, const Flow& f);

// `top` instances with the longest max wait in the JSON (all of them in "devices").
nlohmann::json to_json(const StragglerAnalysis& a, const Timeline& t, size_t top = 20);
std::string format_straggler_table(const StragglerAnalysis& a, const Timeline& t, size_t top = 5);

}  // namespace meshscope::traces
