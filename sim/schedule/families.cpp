// The family table (families.h) and the rules every family's descriptor states.
#include "sim/schedule/families.h"

namespace meshscope::schedule {

// Order functions, defined in pipeline_orders.cpp and torch_family_orders.cpp.
namespace orders {
std::vector<Action> naive(int rank, int pp, int v, int m);
std::vector<Action> gpipe(int rank, int pp, int v, int m);
std::vector<Action> one_f_one_b(int rank, int pp, int v, int m);
std::vector<Action> interleaved(int rank, int pp, int v, int m);
std::vector<Action> zb_h1(int rank, int pp, int v, int m);
std::vector<Action> zb_v(int rank, int pp, int v, int m);
std::vector<Action> dualpipe_v(int rank, int pp, int v, int m);
std::vector<Action> interleaved_zero_bubble(int rank, int pp, int v, int m);
std::vector<Action> looped_bfs(int rank, int pp, int v, int m);
}  // namespace orders

const std::array<FamilyInfo, static_cast<size_t>(Family::kCount)> kFamilies = {{
    {.name = "naive",
     .description = "model parallelism without overlap: one microbatch at a time, forward "
                    "through all stages then backward",
     .torch_class = "",
     .order = orders::naive},
    {.name = "gpipe",
     .description =
         "GPipe: all forwards, then all backwards; activations of every microbatch are kept",
     .torch_class = "ScheduleGPipe",
     .order = orders::gpipe},
    {.name = "1f1b",
     .description = "1F1B (PipeDream-Flush): pp-rank-1 warm-up forwards, then one forward one "
                    "backward, then cool-down",
     .searchable = true,
     .torch_class = "Schedule1F1B",
     .order = orders::one_f_one_b},
    {.name = "interleaved",
     .description = "interleaved 1F1B (Megatron-LM, torch): v model chunks per rank, stage s on "
                    "pp rank s % pp, v >= 2; microbatches in rounds of pp when pp divides them "
                    "(Megatron-LM's only case), else as torch runs them (m divisible by "
                    "max(1, m / pp))",
     .min_virtual_stages = 2,
     .max_virtual_stages = 0,
     .default_virtual_stages = 2,
     .microbatch_rule = MicrobatchRule::kMultipleOfRounds,
     .searchable = true,
     .torch_class = "ScheduleInterleaved1F1B",
     .order = orders::interleaved},
    {.name = "zb-h1",
     .description = "ZB-H1 (Qi et al. 2023): 1F1B with backward split into I and W, rank r "
                    "defers r W's into the cool-down bubble (torch: "
                    "ScheduleInterleavedZeroBubble with one stage per rank)",
     .searchable = true,
     .torch_class = "",
     .order = orders::zb_h1},
    {.name = "tp",
     .description = "tensor parallel (pp = 1): each microbatch forward then backward on one stage "
                    "sharded over the tp ranks",
     .pp_one_only = true,
     .torch_class = "",
     .order = orders::one_f_one_b},
    {.name = "dp",
     .description = "data parallel (pp = 1): each replica runs its microbatches, all-reduces "
                    "gradients over dp, steps",
     .pp_one_only = true,
     .torch_class = "",
     .order = orders::one_f_one_b},
    {.name = "zb-v",
     .description = "ZB-V (Qi et al. 2023, sec. 6): two chunks per "
                    "rank placed in a V, backward split into I and W filling the bubbles",
     .placement = Placement::kV,
     .min_virtual_stages = 2,
     .max_virtual_stages = 2,
     .default_virtual_stages = 2,
     .searchable = true,
     .torch_class = "ScheduleZBVZeroBubble",
     .order = orders::zb_v},
    {.name = "dualpipe-v",
     .description = "DualPipeV (DeepSeek-V3, arXiv 2412.19437): V placement, overlapped "
                    "forward/backward pairs (OVERLAP_F_B, run in order); needs microbatches >= "
                    "2 pp",
     .placement = Placement::kV,
     .min_virtual_stages = 2,
     .max_virtual_stages = 2,
     .default_virtual_stages = 2,
     .microbatch_rule = MicrobatchRule::kAtLeastStages,
     .torch_class = "ScheduleDualPipeV",
     .order = orders::dualpipe_v},
    {.name = "interleaved-zb",
     .description = "interleaved zero bubble (ZB1P, Qi et al. 2023): v "
                    "chunks per rank, stage s on s % pp, I and W split; needs microbatches % "
                    "max(1, microbatches / pp) == 0",
     .max_virtual_stages = 0,
     .default_virtual_stages = 2,
     .microbatch_rule = MicrobatchRule::kMultipleOfRounds,
     .torch_class = "ScheduleInterleavedZeroBubble",
     .order = orders::interleaved_zero_bubble},
    {.name = "looped-bfs",
     .description = "looped BFS (Lamy-Poirier 2022, arXiv 2211.05953): v chunks per rank "
                    "on s % pp, every microbatch through a chunk before the next, backwards in "
                    "reverse",
     .max_virtual_stages = 0,
     .default_virtual_stages = 2,
     .torch_class = "ScheduleLoopedBFS",
     .order = orders::looped_bfs},
}};

std::optional<Family> parse_family(std::string_view s) {
  for (size_t i = 0; i < kFamilies.size(); ++i) {
    if (kFamilies[i].name == s) return static_cast<Family>(i);
  }
  return std::nullopt;
}

std::string family_rule_violation(Family family, const mesh::MeshShape& mesh, int v, int m) {
  if (family >= Family::kCount) return "unknown schedule family";
  const FamilyInfo& f = info(family);
  const std::string who = "schedule '" + std::string(f.name) + "': ";
  const std::string vs = std::to_string(v);
  if (f.max_virtual_stages == 1 && v != 1) {
    return who + "takes one stage per pp rank; virtual stages (" + vs +
           ") are for 'interleaved' and the other multi-chunk families";
  }
  if (v < f.min_virtual_stages) {
    return who + "needs virtual stages >= " + std::to_string(f.min_virtual_stages) + ", got " + vs +
           (family == Family::kInterleaved ? " (with one chunk per rank it is 1f1b)" : "");
  }
  if (f.max_virtual_stages > 0 && v > f.max_virtual_stages) {
    return who + "takes " + std::to_string(f.max_virtual_stages) + " stages per pp rank, got " + vs;
  }
  if (f.pp_one_only && mesh.pp != 1) {
    return who + "is for pp = 1 (got pp=" + std::to_string(mesh.pp) +
           "); use a pipeline family (gpipe, 1f1b, ...), which composes with dp and tp";
  }
  const std::string ms = std::to_string(m) + " microbatches";
  switch (f.microbatch_rule) {
    case MicrobatchRule::kMultipleOfRounds: {
      const int rounds = std::max(1, m / mesh.pp);
      if (m % rounds != 0) {
        return who + "needs microbatches divisible by max(1, microbatches / pp) = " +
               std::to_string(rounds) + " (as torch), got " + ms;
      }
      break;
    }
    case MicrobatchRule::kAtLeastStages:
      if (int64_t{m} < int64_t{mesh.pp} * v) {
        return who + "needs at least as many microbatches as stages (" +
               std::to_string(int64_t{mesh.pp} * v) + "), got " + ms;
      }
      break;
    case MicrobatchRule::kAny:
    case MicrobatchRule::kCount:
      break;
  }
  return {};
}

std::vector<int> stage_placement(Placement placement, int pp, int num_stages) {
  std::vector<int> owner(num_stages);
  int rank = 0;
  for (int s = 0; s < num_stages; ++s) {
    if (placement == Placement::kLoop) {
      owner[s] = s % pp;
      continue;
    }
    // torch's walk: stay on the border rank between two legs of the V, else step down or up.
    owner[s] = rank;
    if ((s + 1) % pp == 0) continue;
    rank += (s / pp) % 2 == 0 ? 1 : -1;
  }
  return owner;
}

}  // namespace meshscope::schedule
