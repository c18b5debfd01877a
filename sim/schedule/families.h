// The schedule families and their one descriptor each: name, description, where stages live,
// chunks per rank, the microbatch rule, whether predict's search tries it, and the function that
// gives each pp rank's compute order. Everything that differs between families is read from here
// (generators, CLI defaults, predict's config checks and search, the GUI's what-if).
//
// Adding a family touches three files: the enum value below, its row in families.cpp, and its
// order function (pipeline_orders.cpp or torch_family_orders.cpp, or a new file listed in
// CMakeLists.txt).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/mesh/mesh.h"
#include "sim/schedule/action.h"

namespace meshscope::schedule {

// Stable values (Schedule::name and configs use the names).
enum class Family : uint8_t {
  kNaive = 0,
  kGpipe = 1,
  kOneFOneB = 2,
  kInterleaved = 3,
  kZbH1 = 4,
  kTensorParallel = 5,
  kDataParallel = 6,
  kZbV = 7,
  kDualPipeV = 8,
  kInterleavedZeroBubble = 9,
  kLoopedBfs = 10,
  kCount
};

// Where stage s of pp * v stages lives. kLoop: pp coordinate s % pp (Megatron, torch's "loop").
// kV: down the ranks and back up, so rank r holds r and 2pp - 1 - r when v = 2 (torch's "v"
// style of generate_stage_to_rank_mapping; the first and last stage share rank 0).
enum class Placement : uint8_t { kLoop = 0, kV = 1, kCount };
inline constexpr std::array<std::string_view, static_cast<size_t>(Placement::kCount)>
    kPlacementNames = {"loop", "v"};

// What the microbatch count per replica must satisfy.
enum class MicrobatchRule : uint8_t {
  kAny = 0,
  kMultipleOfRounds = 2,  // m % max(1, m / pp) == 0 (torch's interleaved schedules)
  kAtLeastStages = 3,     // m >= pp * v (torch's DualPipeV)
  kCount
};

// A pp rank's compute actions (F, B, I, W; OVERLAP_F_B groups via Action::overlap_next), for
// rank in [0, pp) with v chunks per rank and m microbatches that satisfy the family's rules.
using OrderFn = std::vector<Action> (*)(int rank, int pp, int v, int m);

struct FamilyInfo {
  std::string_view name;         // as in `meshscope run --schedule NAME` and Schedule::name
  std::string_view description;  // one line, for `meshscope schedules`
  Placement placement = Placement::kLoop;
  int min_virtual_stages = 1;  // chunks per pp rank
  int max_virtual_stages = 1;  // 0: no bound
  int default_virtual_stages = 1;
  MicrobatchRule microbatch_rule = MicrobatchRule::kAny;
  bool pp_one_only = false;  // the tp and dp families
  bool searchable = false;   // `predict --search` tries it
  // torch.distributed.pipelining's class with the same per-rank order (tests/fixtures/
  // torch_orders compares them), or empty.
  std::string_view torch_class;
  OrderFn order = nullptr;
};

extern const std::array<FamilyInfo, static_cast<size_t>(Family::kCount)> kFamilies;

inline const FamilyInfo& info(Family f) { return kFamilies[static_cast<size_t>(f)]; }
inline std::string_view name(Family f) { return info(f).name; }
std::optional<Family> parse_family(std::string_view s);

// Empty when `family` runs with this mesh, chunks per rank and microbatches per replica; else one
// line saying which rule is broken ("schedule 'interleaved': needs microbatches divisible by
// max(1, microbatches / pp) = 2 (as torch), got 7 microbatches"). The generators, predict's
// config and its search all ask this.
std::string family_rule_violation(Family family, const mesh::MeshShape& mesh, int virtual_stages,
                                  int microbatches);

// stage -> pp coordinate for `num_stages` stages on `pp` ranks (num_stages a multiple of pp).
std::vector<int> stage_placement(Placement placement, int pp, int num_stages);

}  // namespace meshscope::schedule
