// Stragglers: match collective spans across devices by name, group and occurrence, then compare
// arrivals.
#include "traces/analysis_stragglers.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <tuple>

#include "traces/analysis.h"

namespace meshscope::traces {
bool is_transfer_flow(const Timeline& t, const Flow& f) {
  if (f.from >= t.spans.size() || f.to >= t.spans.size()) return false;
  const Span& send = t.spans[f.from];
  const Span& recv = t.spans[f.to];
  if (send.device >= t.devices.size() || recv.device >= t.devices.size() ||
      t.devices[send.device].rank == t.devices[recv.device].rank) {
    return false;
  }
  return (send.kind == SpanKind::kSend || send.kind == SpanKind::kAnnotation ||
          send.kind == SpanKind::kHost) &&
         (recv.kind == SpanKind::kRecv || recv.kind == SpanKind::kAnnotation);
}

namespace {

// The group instance a collective span ran in. Where the trace lists the group's members (an
// imported NCCL kernel's "Process Group Ranks": Collective::first_rank), they name it. Otherwise
// from its device's mesh coordinates: the ranks of a group of kind K differ only in K's coordinate
// (traces/collective.h), so the other two name the instance; ep and edp groups split dp by the
// run's ep. kUnknown where neither is known (no collective record, no coordinates: most imported
// traces), and spans of one name are matched across every device.
using Instance = std::array<int, 4>;  // {how it is named: 0 mesh, 1 members; then three numbers}
constexpr Instance kUnknown{-1, -1, -1, -1};

Instance group_instance(const Timeline& t, uint32_t span) {
  const Collective* c = t.collective_of(span);
  if (c != nullptr && c->first_rank >= 0) return {1, c->first_rank, c->rank_stride, c->ranks};
  const MeshCoord& m = t.devices[t.spans[span].device].coord;
  if (c == nullptr || m.dp < 0 || m.pp < 0 || m.tp < 0) return kUnknown;
  const int ep = static_cast<int>(std::clamp<int64_t>(t.run.workload.ep, 0, 1 << 20));
  switch (c->group) {
    case GroupKind::kWorld:
      return {0, 0, 0, 0};
    case GroupKind::kDp:
      return {0, 0, m.pp, m.tp};
    case GroupKind::kPp:
      return {0, m.dp, 0, m.tp};
    case GroupKind::kTp:
      return {0, m.dp, m.pp, 0};
    case GroupKind::kEp:
      return ep > 0 ? Instance{0, m.dp / ep, m.pp, m.tp} : kUnknown;
    case GroupKind::kEdp:
      return ep > 0 ? Instance{0, m.dp % ep, m.pp, m.tp} : kUnknown;
    case GroupKind::kCount:
      break;
  }
  return kUnknown;
}

std::vector<size_t> by_max_wait(const StragglerAnalysis& a, size_t top) {
  std::vector<size_t> order(a.instances.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return a.instances[x].max_wait_ns > a.instances[y].max_wait_ns;
  });
  if (order.size() > top) order.resize(top);
  return order;
}

// A kernel name as the table prints it: at most 60 characters.
std::string shortened(const std::string& name) {
  return name.size() > 60 ? name.substr(0, 57) + "..." : name;
}

}  // namespace

StragglerAnalysis stragglers(const Timeline& t) {
  // (name, group instance, occurrence) -> span per device; spans are visited in begin order per
  // device. A device takes part in one instance of each group kind, so counting occurrences per
  // name on each device is enough.
  std::vector<std::vector<uint32_t>> per_device(t.devices.size());
  for (uint32_t i = 0; i < t.spans.size(); ++i) {
    const Span& s = t.spans[i];
    if (s.kind == SpanKind::kCollective && s.device < t.devices.size()) {
      per_device[s.device].push_back(i);
    }
  }
  std::map<std::tuple<uint32_t, Instance, int64_t>, std::vector<uint32_t>> groups;
  // (name, group instance) -> spans of it on each device that ran it.
  std::map<std::pair<uint32_t, Instance>, std::map<uint16_t, int64_t>> counts;
  for (auto& list : per_device) {
    std::stable_sort(list.begin(), list.end(),
                     [&](uint32_t a, uint32_t b) { return t.reached_ns(a) < t.reached_ns(b); });
    // The k-th of a name in one group: a rank in two groups that both run a kernel of one name
    // (an all-reduce) numbers each group's apart.
    std::map<std::pair<uint32_t, Instance>, int64_t> seen;
    for (uint32_t i : list) {
      const uint32_t name = t.spans[i].name;
      const Instance instance = group_instance(t, i);
      groups[{name, instance, seen[{name, instance}]++}].push_back(i);
      ++counts[{name, instance}][t.spans[i].device];
    }
  }
  StragglerAnalysis out;
  // Devices that ran a collective a different number of times did not run it together: its k-th
  // spans are not one collective (a rank's profile cut short, files of two runs, a name shared
  // by two groups whose members are not known), so none of them is paired.
  std::set<std::pair<uint32_t, Instance>> unpaired;
  for (const auto& [key, per] : counts) {
    const int64_t first = per.begin()->second;
    if (std::all_of(per.begin(), per.end(), [&](const auto& d) { return d.second == first; }))
      continue;
    unpaired.insert(key);
    UnpairedCollective u;
    u.name = std::string(t.strings.get(key.first));
    u.counts.assign(per.begin(), per.end());
    out.unpaired.push_back(std::move(u));
  }
  // More devices than the group has members (its size named, its members not: a name shared by
  // several groups) ran no one collective either.
  for (const auto& [key, spans] : groups) {
    const Collective* c = t.collective_of(spans.front());
    const std::pair<uint32_t, Instance> name_instance{std::get<0>(key), std::get<1>(key)};
    if (c == nullptr || c->ranks <= 0 || static_cast<int64_t>(spans.size()) <= c->ranks ||
        unpaired.contains(name_instance))
      continue;
    unpaired.insert(name_instance);
    UnpairedCollective u;
    u.name = std::string(t.strings.get(std::get<0>(key)));
    u.group_ranks = c->ranks;
    u.counts.assign(counts[name_instance].begin(), counts[name_instance].end());
    out.unpaired.push_back(std::move(u));
  }
  std::map<uint16_t, StragglerDevice> dev;
  for (auto& [key, spans] : groups) {
    if (spans.size() < 2) continue;
    if (unpaired.contains({std::get<0>(key), std::get<1>(key)})) continue;
    CollectiveInstance c;
    c.name = std::string(t.strings.get(std::get<0>(key)));
    c.occurrence = std::get<2>(key);
    std::sort(spans.begin(), spans.end(),
              [&](uint32_t a, uint32_t b) { return t.spans[a].device < t.spans[b].device; });
    c.spans = spans;
    c.last_device = t.spans[spans[0]].device;
    c.last_arrival_ns = t.reached_ns(spans[0]);
    for (uint32_t i : spans) {
      if (t.reached_ns(i) > c.last_arrival_ns) {
        c.last_arrival_ns = t.reached_ns(i);
        c.last_device = t.spans[i].device;
      }
    }
    for (uint32_t i : spans) {
      const Span& s = t.spans[i];
      StragglerDevice& d = dev[s.device];
      ++d.collectives;
      if (s.device == c.last_device) {
        ++d.times_last;
        continue;
      }
      const int64_t wait = c.last_arrival_ns - t.reached_ns(i);
      d.waited_ns += wait;
      c.total_wait_ns += wait;
      c.max_wait_ns = std::max(c.max_wait_ns, wait);
    }
    dev[c.last_device].made_wait_ns += c.total_wait_ns;
    out.instances.push_back(std::move(c));
  }
  std::stable_sort(out.instances.begin(), out.instances.end(),
                   [](const CollectiveInstance& a, const CollectiveInstance& b) {
                     return a.last_arrival_ns < b.last_arrival_ns;
                   });
  for (const Flow& f : t.flows) {
    if (f.from >= t.spans.size() || f.to >= t.spans.size()) continue;
    const Span& send = t.spans[f.from];
    const Span& recv = t.spans[f.to];
    if (!is_transfer_flow(t, f)) continue;
    const TransferWait w{f.from, f.to, send.device, recv.device,
                         std::max<int64_t>(0, send.begin_ns - t.reached_ns(f.to))};
    StragglerDevice& r = dev[recv.device];
    ++r.recvs;
    r.recv_waited_ns += w.wait_ns;
    StragglerDevice& sd = dev[send.device];
    if (w.wait_ns > 0) {
      ++sd.late_sends;
      sd.made_recvs_wait_ns += w.wait_ns;
    }
    out.transfers.push_back(w);
  }
  for (auto& [d, s] : dev) {
    s.device = d;
    s.rank = t.devices[d].rank;
    s.name = t.devices[d].name;
    out.devices.push_back(s);
  }
  return out;
}

nlohmann::json to_json(const StragglerAnalysis& a, const Timeline& t, size_t top) {
  nlohmann::json inst = nlohmann::json::array();
  for (size_t i : by_max_wait(a, top)) {
    const CollectiveInstance& c = a.instances[i];
    nlohmann::json ranks = nlohmann::json::array();  // tells two groups' instances apart
    for (uint32_t i : c.spans) ranks.push_back(t.devices[t.spans[i].device].rank);
    inst.push_back({{"name", c.name},
                    {"occurrence", c.occurrence},
                    {"devices", c.spans.size()},
                    {"ranks", std::move(ranks)},
                    {"last_rank", t.devices[c.last_device].rank},
                    {"last_device", c.last_device},
                    {"last_arrival_ns", c.last_arrival_ns},
                    {"max_wait_ns", c.max_wait_ns},
                    {"total_wait_ns", c.total_wait_ns}});
  }
  nlohmann::json devs = nlohmann::json::array();
  for (const StragglerDevice& d : a.devices) {
    devs.push_back({{"device", d.device},
                    {"rank", d.rank},
                    {"name", d.name},
                    {"collectives", d.collectives},
                    {"times_last", d.times_last},
                    {"waited_ns", d.waited_ns},
                    {"made_others_wait_ns", d.made_wait_ns}});
  }
  std::vector<size_t> order(a.transfers.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return a.transfers[x].wait_ns > a.transfers[y].wait_ns;
  });
  if (order.size() > top) order.resize(top);
  nlohmann::json transfers = nlohmann::json::array();
  for (size_t i : order) {
    const TransferWait& w = a.transfers[i];
    transfers.push_back({{"recv", std::string(t.span_name(t.spans[w.recv]))},
                         {"recv_span", w.recv},
                         {"send_span", w.send},
                         {"receiver_rank", t.devices[w.receiver].rank},
                         {"sender_rank", t.devices[w.sender].rank},
                         {"recv_begin_ns", t.spans[w.recv].begin_ns},
                         {"recv_posted_ns", t.reached_ns(w.recv)},
                         {"send_begin_ns", t.spans[w.send].begin_ns},
                         {"wait_ns", w.wait_ns}});
  }
  for (size_t i = 0; i < a.devices.size(); ++i) {
    const StragglerDevice& d = a.devices[i];
    devs[i]["recvs"] = d.recvs;
    devs[i]["recv_waited_ns"] = d.recv_waited_ns;
    devs[i]["late_sends"] = d.late_sends;
    devs[i]["made_recvs_wait_ns"] = d.made_recvs_wait_ns;
  }
  nlohmann::json unpaired = nlohmann::json::array();
  for (const UnpairedCollective& u : a.unpaired) {
    nlohmann::json per = nlohmann::json::array();
    for (const auto& [device, n] : u.counts)
      per.push_back({{"device", device}, {"rank", t.devices[device].rank}, {"spans", n}});
    unpaired.push_back(
        {{"name", u.name},
         {"devices", std::move(per)},
         {"group_ranks", u.group_ranks > 0 ? nlohmann::json(u.group_ranks) : nlohmann::json()}});
  }
  return {{"collectives", a.instances.size()},
          {"unpaired", std::move(unpaired)},
          {"longest_waits", inst},
          {"transfers", a.transfers.size()},
          {"longest_transfer_waits", transfers},
          {"devices", devs}};
}

std::string format_straggler_table(const StragglerAnalysis& a, const Timeline& t, size_t top) {
  std::string out;
  if (!a.transfers.empty()) {
    out += "stragglers at transfers (" + std::to_string(a.transfers.size()) +
           " send -> recv across devices; wait = send begin − recv posted when the send was "
           "late):\n";
    for (const StragglerDevice& d : a.devices) {
      if (d.recvs == 0 && d.late_sends == 0) continue;
      out += "  " + d.name + ": its " + std::to_string(d.recvs) + " recvs waited " +
             format_duration(d.recv_waited_ns) + " for senders; " + std::to_string(d.late_sends) +
             " of its sends were late, making receivers wait " +
             format_duration(d.made_recvs_wait_ns) + "\n";
    }
  }
  for (const UnpairedCollective& u : a.unpaired) {
    std::string per;
    for (const auto& [device, n] : u.counts)
      per += (per.empty() ? "" : ", ") + std::to_string(n) + " on " + t.devices[device].name;
    out += "stragglers: " + shortened(u.name) + " not paired across devices: " + per +
           (u.group_ranks > 0
                ? " (more devices than its group's " + std::to_string(u.group_ranks) +
                      " members, which the trace does not list, ran it)\n"
                : " (devices that ran it a different number of times did not run it together)\n");
  }
  if (a.instances.empty()) {
    return out + (a.unpaired.empty() ? "stragglers: no collective ran on two or more devices\n"
                                     : "stragglers: no other collective ran on two or more "
                                       "devices\n");
  }
  out += "stragglers (" + std::to_string(a.instances.size()) +
         " collectives across devices; wait = last arrival − own arrival):\n";
  for (const StragglerDevice& d : a.devices) {
    if (d.collectives == 0) continue;
    out += "  " + d.name + ": last at " + std::to_string(d.times_last) + " of " +
           std::to_string(d.collectives) + ", waited " + format_duration(d.waited_ns) +
           " in total, made the others wait " + format_duration(d.made_wait_ns) + "\n";
  }
  out += "  longest waits:\n";
  for (size_t i : by_max_wait(a, top)) {
    const CollectiveInstance& c = a.instances[i];
    out += "    " + format_duration(c.max_wait_ns) + "  waiting for " +
           t.devices[c.last_device].name + "  " + shortened(c.name) + " #" +
           std::to_string(c.occurrence) + "\n";
  }
  return out;
}

}  // namespace meshscope::traces
