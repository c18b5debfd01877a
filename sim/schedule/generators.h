// Schedule generators: the classic pipeline families, composed with data and tensor parallelism
// on a dp x pp x tp mesh.
//
// What a generated Schedule means (the executor and the simulator implement exactly this):
// - Pipeline: stage s lives on pp coordinate s % pp (so with virtual_stages v a pp rank holds
//   stages r, r + pp, ..., r + (v-1)pp). Each F/B/I/W runs one stage on one microbatch.
// - Tensor parallelism: the tp ranks of a pipeline stage run the same program. The tensor-parallel
//   collectives (Megatron: all-reduce after the row-parallel linear in F, after the column-parallel
//   linear's input gradient in B/I) are inside those compute actions, not separate actions. P2P
//   transfers go between equal tp coordinates: tp rank t of stage s sends to tp rank t of s + 1.
// - Data parallelism: each dp replica runs the whole pipeline on its own `microbatches`
//   microbatches (numbered 0..m-1 in every replica). After a stage's last gradient work (its last
//   B, or its last W) the rank all-reduces that stage's gradients over its dp group
//   ({s}ALLREDUCE(dp):{bytes}, only when dp > 1) and then runs {s}STEP.
// - Transfers: a SEND right after the compute that produces the data, a RECV right before the
//   compute that consumes it. Sends are eager (see validator.h), so this placement cannot
//   deadlock for the families below. Between stages on the same rank nothing is transferred.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "sim/mesh/mesh.h"
#include "sim/schedule/schedule.h"

namespace meshscope::schedule {

enum class Family : uint8_t {
  kNaive = 0,
  kGpipe = 1,
  kOneFOneB = 2,
  kInterleaved = 3,
  kZbH1 = 4,
  kTensorParallel = 5,
  kDataParallel = 6,
  kCount
};

struct FamilyInfo {
  std::string_view name;         // as in `meshscope run --schedule NAME` and Schedule::name
  std::string_view description;  // one line, for `meshscope schedules`
};

inline constexpr std::array<FamilyInfo, static_cast<size_t>(Family::kCount)> kFamilies = {{
    {"naive",
     "model parallelism without overlap: one microbatch at a time, forward through all stages "
     "then backward"},
    {"gpipe", "GPipe: all forwards, then all backwards; activations of every microbatch are kept"},
    {"1f1b",
     "1F1B (PipeDream-Flush): pp-rank-1 warm-up forwards, then one forward one backward, then "
     "cool-down"},
    {"interleaved",
     "interleaved 1F1B (Megatron-LM): v model chunks per rank, stage s on pp rank s % pp; needs "
     "microbatches % pp == 0 and v >= 2"},
    {"zb-h1",
     "ZB-H1 (Qi et al. 2023): 1F1B with backward split into I and W, rank r defers r W's into "
     "the cool-down bubble"},
    {"tp",
     "tensor parallel (pp = 1): each microbatch forward then backward on one stage sharded over "
     "the tp ranks"},
    {"dp",
     "data parallel (pp = 1): each replica runs its microbatches, all-reduces gradients over dp, "
     "steps"},
}};

constexpr std::string_view name(Family f) { return kFamilies[static_cast<size_t>(f)].name; }
std::optional<Family> parse_family(std::string_view s);

struct GeneratorConfig {
  Family family = Family::kOneFOneB;
  mesh::MeshShape mesh;
  int microbatches = 1;    // per data-parallel replica, per step
  int virtual_stages = 1;  // model chunks per pp rank; only interleaved takes more than 1
  // Bytes stage s sends to stage s + 1 per microbatch, per tp rank (the gradient sent back has the
  // same size): one value per stage (the last stage's is unused), one per stage boundary
  // (num_stages - 1 values), a single value for every stage, or none (0 = not given).
  std::vector<int64_t> activation_bytes{};
  // Bytes of stage s's gradients held by one tp rank (the dp all-reduce payload): one value per
  // stage, a single value for every stage, or none (0 = not given).
  std::vector<int64_t> gradient_bytes{};
};

// Throws std::invalid_argument saying what is wrong: a mesh dimension < 1, microbatches < 1,
// virtual_stages != 1 for a family other than interleaved, interleaved with v < 2 or
// microbatches % pp != 0 (Megatron's constraint), tp/dp families with pp != 1, byte lists of the
// wrong length or with negative values, or a schedule of more than kMaxGeneratedActions actions.
void check_config(const GeneratorConfig& config);

// About 50 bytes each in the engine: 2^25 actions (16,384 GPUs with 256 microbatches of 1F1B) fit a
// few GiB.
inline constexpr int64_t kMaxGeneratedActions = int64_t{1} << 25;

// The schedule for `config` (checked by check_config first).
Schedule generate(const GeneratorConfig& config);

// The compute actions (F, B, I, W) that pp coordinate r runs, for r in [0, pp): the order that
// generate() then lowers into transfers, collectives and steps. Same preconditions as generate().
std::vector<std::vector<Action>> pipeline_compute_orders(Family family, int pp, int virtual_stages,
                                                         int microbatches);

}  // namespace meshscope::schedule
