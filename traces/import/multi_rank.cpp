// Multi-rank alignment: shift each rank by its base time, then (optionally) by the median
// difference of the end times of the collectives it ran with a reference rank — NCCL collectives
// end together on every member, so what remains of that difference is clock skew. Only the
// collectives of a group holding both ranks count, where the trace lists its members.
#include "traces/import/multi_rank.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <stdexcept>

#include "traces/import/kineto_names.h"
#include "traces/number_text.h"
#include "traces/timeline_merge.h"

namespace meshscope::traces::importer {
namespace {

struct Collective {
  std::string type;
  int64_t end_ns;
  traces::Collective record;  // its group's members where the trace lists them (has_member)
};

// A rank's collectives in the order it ran them. gloo's (torch on CPU) are left out: they name no
// group, and in a job of several pipelines a rank's gloo all-reduces are with its data-parallel
// peers, not with the reference rank, so their ends are no evidence of skew against it.
std::vector<Collective> collectives_of(const Timeline& t) {
  std::vector<std::pair<int64_t, uint32_t>> order;  // (begin, span)
  for (uint32_t i = 0; i < t.spans.size(); ++i) {
    if (t.spans[i].kind == SpanKind::kCollective && !t.span_name(t.spans[i]).starts_with("gloo:"))
      order.emplace_back(t.spans[i].begin_ns, i);
  }
  std::sort(order.begin(), order.end());
  std::vector<Collective> out;
  out.reserve(order.size());
  for (const auto& [begin, i] : order) {
    const traces::Collective* c = t.collective_of(i);
    out.push_back({collective_type(t.span_name(t.spans[i])), t.spans[i].end_ns,
                   c != nullptr ? *c : traces::Collective{}});
  }
  return out;
}

// Those of a rank's collectives that can have ended with the other rank's: of a group holding both
// ranks, or of a group whose members the trace does not list. A dp × pp job's ranks of two
// pipeline stages run their data-parallel all-reduces in two groups, at two times; matched by
// type and order, they had read as clock skew.
std::vector<Collective> shared_with(const std::vector<Collective>& own, int other_rank) {
  std::vector<Collective> out;
  for (const Collective& c : own) {
    if (c.record.has_member(other_rank).value_or(true)) out.push_back(c);
  }
  return out;
}

// Pairs of (reference end, other end) for collectives both ran: the same sequence of types, or
// failing that the k-th of each type where both ran that type equally often.
std::vector<std::pair<int64_t, int64_t>> match(const std::vector<Collective>& ref,
                                               const std::vector<Collective>& other) {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  const bool same_sequence =
      ref.size() == other.size() &&
      std::equal(ref.begin(), ref.end(), other.begin(),
                 [](const Collective& a, const Collective& b) { return a.type == b.type; });
  if (same_sequence) {
    for (size_t i = 0; i < ref.size(); ++i) pairs.emplace_back(ref[i].end_ns, other[i].end_ns);
    return pairs;
  }
  std::map<std::string, std::pair<std::vector<int64_t>, std::vector<int64_t>>> by_type;
  for (const Collective& c : ref) by_type[c.type].first.push_back(c.end_ns);
  for (const Collective& c : other) by_type[c.type].second.push_back(c.end_ns);
  for (const auto& [type, ends] : by_type) {
    if (ends.first.size() != ends.second.size()) continue;
    for (size_t i = 0; i < ends.first.size(); ++i) {
      pairs.emplace_back(ends.first[i], ends.second[i]);
    }
  }
  return pairs;
}

// a + b when it is a time the importers accept (import_types.h); nullopt otherwise.
std::optional<int64_t> shifted(int64_t a, int64_t b) {
  int64_t out = 0;
  if (__builtin_add_overflow(a, b, &out) || !time_in_range(out)) return std::nullopt;
  return out;
}

int64_t median(std::vector<int64_t> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// Rank `rank`'s offset corrected by the median difference of the ends of the collectives it ran
// with reference rank `ref_rank` (already on the common axis at `ref_offset`); false, and nothing
// changed, where they share none.
bool align_against(const std::vector<Collective>& ref, int ref_rank, int64_t ref_offset,
                   const std::vector<Collective>& own, int rank, int64_t& offset,
                   RankClock& clock) {
  const auto pairs = match(shared_with(ref, rank), shared_with(own, ref_rank));
  std::vector<int64_t> deltas;
  deltas.reserve(pairs.size());
  for (const auto& [ref_end, end] : pairs) {
    // Both ends on the common axis; a pair that would not fit is no evidence of skew.
    const auto a = shifted(ref_end, ref_offset);
    const auto b = shifted(end, offset);
    if (a && b && time_in_range(*a - *b)) deltas.push_back(*a - *b);
  }
  if (deltas.empty()) return false;
  const int64_t correction = median(deltas);
  const auto corrected = shifted(offset, correction);
  if (!corrected) return false;
  offset = *corrected;
  std::vector<int64_t> residual;
  residual.reserve(deltas.size());
  for (int64_t d : deltas) residual.push_back(std::llabs(d - correction));
  clock.matched_collectives = static_cast<int>(pairs.size());
  clock.reference_rank = ref_rank;
  clock.residual_skew_ns = median(residual);
  clock.max_skew_ns = *std::max_element(residual.begin(), residual.end());
  return true;
}

}  // namespace

std::string collective_type(std::string_view name) {
  if (nccl_kernel_op(name) == CommOp::kNone) return std::string(name);
  std::string_view rest = name.substr(name.starts_with("ncclDevKernel") ? 13 : 10);
  if (!rest.empty() && rest.front() == '_') rest.remove_prefix(1);
  const size_t end = rest.find_first_of("_(");
  return std::string(rest.substr(0, end));
}

std::vector<int64_t> align_clocks(const std::vector<RankTrace>& ranks, ClockAlign align,
                                  std::vector<RankClock>& clocks) {
  std::vector<int64_t> offsets(ranks.size(), 0);
  clocks.clear();
  for (const RankTrace& r : ranks) clocks.push_back(RankClock{.file = r.file, .rank = r.rank});
  if (align == ClockAlign::kNone || ranks.empty()) return offsets;
  const bool all_based = std::all_of(ranks.begin(), ranks.end(),
                                     [](const RankTrace& r) { return r.base_time_ns.has_value(); });
  if (all_based) {
    int64_t origin = *ranks.front().base_time_ns;
    for (const RankTrace& r : ranks) origin = std::min(origin, *r.base_time_ns);
    for (size_t i = 0; i < ranks.size(); ++i) offsets[i] = *ranks[i].base_time_ns - origin;
  }
  if (align == ClockAlign::kCollectiveEnds) {
    // Each rank against the first rank, or failing that against a rank already aligned by
    // collectives that shares a group with it (a rank of another pipeline stage shares its
    // data-parallel group with ranks of its own stage only). Rounds until no rank gains one: in
    // rank order a rank may share groups only with ranks after it.
    std::vector<std::vector<Collective>> all;
    for (const RankTrace& r : ranks) all.push_back(collectives_of(r.timeline));
    std::vector<size_t> references = {0};  // aligned: the first rank, then in the order found
    for (size_t before = 0; references.size() > before;) {
      before = references.size();
      for (size_t i = 1; i < ranks.size(); ++i) {
        if (clocks[i].reference_rank >= 0) continue;  // aligned in an earlier round
        const auto j = std::find_if(references.begin(), references.end(), [&](size_t r) {
          return align_against(all[r], ranks[r].rank, offsets[r], all[i], ranks[i].rank, offsets[i],
                               clocks[i]);
        });
        if (j != references.end()) references.push_back(i);
      }
    }
  }
  for (size_t i = 0; i < ranks.size(); ++i) clocks[i].offset_ns = offsets[i];
  return offsets;
}

Timeline merge_ranks(std::vector<RankTrace>& ranks, const std::vector<int64_t>& offsets) {
  Timeline out;
  std::map<std::string, std::string> sources;
  int64_t rank_count = 0;
  for (size_t r = 0; r < ranks.size(); ++r) {
    Timeline& t = ranks[r].timeline;
    const int64_t shift = offsets[r];
    // meshscope's export of a merged job (it says how many "ranks") holds its ranks' devices,
    // named and numbered, and its ranks' keys ("rank 2.pipeline_actions") beside the job's own:
    // all stay as they are. Read as one rank, every device became rank 0 and the keys nested
    // ("rank 0.rank 2.pipeline_actions"): the job lost its pipeline.
    const auto job_ranks = t.metadata.find("ranks");
    const std::optional<int64_t> in_file =
        job_ranks != t.metadata.end() ? parse_whole_int(job_ranks->second) : std::nullopt;
    const bool merged_job = in_file.has_value();
    // Imported per-rank files name their devices "GPU 0"; say whose. meshscope's own traces
    // (and Kineto files with distributedInfo) already do.
    const RunSource source = t.run.source;
    const bool foreign =
        source == RunSource::kKineto || source == RunSource::kNsys || source == RunSource::kChrome;
    const bool named_by_rank = t.metadata.count("rank") > 0 || !foreign || merged_job;
    const auto device_base = static_cast<uint32_t>(out.devices.size());
    if (device_base + t.devices.size() > UINT16_MAX) {
      throw std::length_error("more than 65535 devices over all ranks");
    }
    for (Device& d : t.devices) {
      if (!named_by_rank) {
        d.name = "rank " + std::to_string(ranks[r].rank) + " · " + d.name;
        d.rank = ranks[r].rank;
      }
      out.devices.push_back(std::move(d));
    }
    std::vector<int> device_map(t.devices.size());
    for (size_t d = 0; d < device_map.size(); ++d)
      device_map[d] = static_cast<int>(device_base + d);
    try {
      append_timeline(out, t, device_map, shift, kMaxTimeNs);
    } catch (const std::out_of_range&) {
      throw ImportError(ranks[r].file, "",
                        "its clock offset of " + std::to_string(shift) +
                            " ns moves its events beyond ±" + std::to_string(kMaxTimeNs) +
                            " ns (base times or collective ends that cannot be aligned)");
    }
    // One descriptor for the job: the first rank's; ranks of different sources, boards or
    // process-group backends make that fact unknown.
    if (r == 0) {
      out.run = t.run;
    } else {
      if (out.run.source != t.run.source) out.run.source = RunSource::kUnknown;
      if (out.run.gpu != t.run.gpu) out.run.gpu.clear();
      if (out.run.process_group_backend != t.run.process_group_backend)
        out.run.process_group_backend.clear();
    }
    const std::string prefix = merged_job ? "" : "rank " + std::to_string(ranks[r].rank) + ".";
    for (const auto& [k, v] : t.metadata) out.metadata[prefix + k] = v;
    if (!merged_job) out.metadata[prefix + "clock_offset_ns"] = std::to_string(shift);
    rank_count += merged_job ? std::max<int64_t>(1, *in_file) : 1;
    sources[t.metadata.count("source") ? t.metadata.at("source") : "unknown"] = "";
    t = Timeline{};  // release this rank's memory as soon as it is merged
  }
  out.metadata["source"] = sources.size() == 1 ? sources.begin()->first : "mixed";
  out.metadata["ranks"] = std::to_string(rank_count);
  return out;
}

}  // namespace meshscope::traces::importer
