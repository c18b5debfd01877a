// What a Timeline is a trace of, as typed facts: who produced it, the mesh, the schedule family,
// microbatches and chunks, the workload with its sizes, and what it ran on (cores, GPU board,
// process-group backend). Producers fill it; the calibration, the predictor and the viewer read it
// (never the display strings in Timeline::metadata, which may say the same for people).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "traces/enum_names.h"

namespace meshscope::traces {

// Who wrote the Timeline. Stable values and names: written into traces ("source").
enum class RunSource : uint8_t {
  kUnknown = 0,
  kCpu = 1,          // meshscope's executor on the cpu backend
  kCuda = 2,         // the executor on real GPUs
  kCudaVirtual = 3,  // the executor on the virtual CUDA fabric
  kSim = 4,          // the simulator
  kKineto = 5,       // imported: torch.profiler / Kineto
  kChrome = 6,       // imported: a Chrome trace of another tool
  kNsys = 7,         // imported: Nsight Systems
  kSynthetic = 8,    // made in memory (the viewer's sample)
  kCount
};
inline constexpr std::array<std::string_view, static_cast<size_t>(RunSource::kCount)>
    kRunSourceNames = {"unknown", "cpu",    "cuda", "cuda-virtual", "sim",
                       "kineto",  "chrome", "nsys", "synthetic"};
constexpr std::string_view name(RunSource s) { return enum_name(kRunSourceNames, s); }
constexpr std::optional<RunSource> parse_run_source(std::string_view s) {
  return parse_enum<RunSource>(kRunSourceNames, s);
}

// The model a run trained. Names are those of the executor's workloads and the simulator's model
// kinds (sim/model/workload.h, sim/predict/config.h), so either converts by name.
enum class ModelKind : uint8_t {
  kUnknown = 0,
  kChain = 1,
  kClassifier = 2,
  kMlp = 3,
  kGpt = 4,
  kVgg = 5,
  kMoe = 6,
  kCount
};
inline constexpr std::array<std::string_view, static_cast<size_t>(ModelKind::kCount)>
    kModelKindNames = {"unknown", "chain", "classifier", "mlp", "gpt", "vgg", "moe"};
constexpr std::string_view name(ModelKind k) { return enum_name(kModelKindNames, k); }
constexpr std::optional<ModelKind> parse_model_kind(std::string_view s) {
  return parse_enum<ModelKind>(kModelKindNames, s);
}

// The sizes of the workload; 0 where the kind has no such size or nobody knows it.
struct WorkloadDescriptor {
  ModelKind kind = ModelKind::kUnknown;
  int64_t layers = 0;  // mlp blocks, gpt transformer layers
  int64_t hidden = 0;  // mlp h, gpt hidden size
  int64_t heads = 0;   // gpt
  int64_t seq = 0;     // gpt sequence length
  int64_t vocab = 0;   // gpt
  int64_t image = 0;   // vgg input side, pixels
  int64_t batch = 0;   // global batch per step, samples over every replica and microbatch
  // moe (sim/model/workload.h): experts per block, experts each token is routed to, the
  // capacity factor, and the expert-parallel degree the experts were sharded over.
  int64_t experts = 0;
  int64_t top_k = 0;
  double capacity_factor = 0;
  int64_t ep = 0;
  friend bool operator==(const WorkloadDescriptor&, const WorkloadDescriptor&) = default;
};

// The mesh's extent per axis; 0 where not known (an imported trace that does not say).
struct MeshExtent {
  int dp = 0;
  int pp = 0;
  int tp = 0;
  bool known() const { return dp > 0 && pp > 0 && tp > 0; }
  int64_t size() const { return int64_t{dp} * pp * tp; }
  friend bool operator==(const MeshExtent&, const MeshExtent&) = default;
};

struct RunDescriptor {
  RunSource source = RunSource::kUnknown;
  // How the run was carried out, for people ("cpu threads", "nccl on 8 GPUs"); nothing parses it.
  std::string backend;
  MeshExtent mesh;
  // The schedule family's name as sim/schedule/families.h spells it ("1f1b", "zb-h1"): the key
  // schedule::parse_family reads. Empty when the schedule is no generator's (a file, an import).
  std::string family;
  std::string schedule;    // the schedule's own name (display); may equal `family`
  int microbatches = 0;    // per step and replica; 0: not known
  int stages = 0;          // pipeline stages (model chunks) over all pp ranks; 0: not known
  int virtual_stages = 0;  // chunks per pp rank; 0: not known
  WorkloadDescriptor workload;
  std::string hardware;  // catalog name the simulator predicted for; empty for measured runs
  // The CPU cores the rank threads of a meshscope cpu run shared: no more than the process could
  // run on (cli/run_common.cpp). Ranks that outnumber them waited for a core inside their spans,
  // which `calibrate` and the viewer's calibration warn of. 0: not known (any other run).
  int cores = 0;
  // The GPU board the trace names, as its device reported it ("NVIDIA H100 80GB HBM3": a PyTorch
  // profiler trace's deviceProperties, an Nsight Systems export's TARGET_INFO_GPU), for the
  // catalog entry that describes it (cost::hardware_for_board). Empty: no board named, or ranks
  // merged into one Timeline named different ones.
  std::string gpu;
  // torch.distributed's process-group backend an imported trace names (Kineto's
  // distributedInfo.backend: "nccl" runs on GPUs, "gloo" as torch's CPU jobs use it): which kind
  // of device the ranks ran on, for `calibrate`. Empty: not named, or merged ranks differ.
  std::string process_group_backend;
  // True where a simulation of identical data- and tensor-parallel replicas traced one device per
  // pipeline stage, standing for its replicas (sim/engine/symmetry.h); `mesh` is the whole run's.
  bool replicas_simulated_once = false;
  // The `meshscope simulate` configuration the trace predicts (sim/predict/config.h's JSON, the
  // first point), for the viewer's what-if to predict with its framework and options: `mesh`,
  // `family` and `workload` do not hold them. Empty: not a `simulate` trace.
  std::string sim_config;
  friend bool operator==(const RunDescriptor&, const RunDescriptor&) = default;
};

}  // namespace meshscope::traces
