// A device type and its interconnect, read from a catalog data file (sim/cost/catalog/*.json), so
// users add hardware without recompiling.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace meshscope::cost {

// Upper bounds past which a device's figure is a typo, not a what-if: far past the fastest catalog
// entry (b200-sxm.json: 4.5e15 FP8 FLOP/s dense, 180e9 bytes of HBM at 8e12 B/s, NVLink 900e9 B/s
// a direction). An assumption: wide enough for any device a what-if imagines, narrow enough that
// step times and MFU print as numbers (a peak of 1e300 FLOP/s printed an MFU of 8.9e-288%).
// Hardware files and calibrations (calibration.h) are read within them, each rate at least 1.
inline constexpr double kMaxFlops = 1e18;      // 222 times the B200's FP8 peak
inline constexpr double kMaxBytes = 1e15;      // 5,556 times its memory
inline constexpr double kMaxBytesPerS = 1e16;  // 1,250 times its HBM's bandwidth
inline constexpr double kMaxDelayNs = 1e9;     // a latency or launch cost of 1 s: 100,000 hops

enum class Precision : uint8_t { kBf16 = 0, kFp16 = 1, kFp32 = 2, kTf32 = 3, kCount };
inline constexpr std::array<std::string_view, static_cast<size_t>(Precision::kCount)>
    kPrecisionNames = {"bf16", "fp16", "fp32", "tf32"};
constexpr std::string_view name(Precision p) { return kPrecisionNames[static_cast<size_t>(p)]; }
std::optional<Precision> parse_precision(std::string_view s);
// Bytes of one element of parameters and activations at a precision (tf32 is stored as fp32).
constexpr int element_bytes(Precision p) {
  return p == Precision::kBf16 || p == Precision::kFp16 ? 2 : 4;
}

// Which row of NCCL's latency table (src/graph/tuning.cc, hwLat) a link tier uses.
enum class LinkKind : uint8_t { kNvlink = 0, kPci = 1, kNet = 2, kCount };
inline constexpr std::array<std::string_view, static_cast<size_t>(LinkKind::kCount)>
    kLinkKindNames = {"nvlink", "pci", "net"};
constexpr std::string_view name(LinkKind k) { return kLinkKindNames[static_cast<size_t>(k)]; }

// One level of the interconnect, as seen from one device.
struct LinkTier {
  std::string name;  // "nvlink4 (nvswitch)", "infiniband ndr"
  LinkKind kind = LinkKind::kNvlink;
  double bandwidth_bytes_per_s = 0;  // per device, one direction
  double latency_ns = 0;             // one point-to-point message (alpha)
  // Fraction of bandwidth_bytes_per_s that NCCL's bus bandwidth reaches on this tier.
  double collective_efficiency = 1.0;
  // Bus bandwidth of an all-reduce that the switches of this tier reduce (NCCL's NVLS algorithm,
  // NVLink SHARP on NVSwitch 3); 0: none.
  double nvls_bus_bandwidth_bytes_per_s = 0;
};

// How close kernels get to the peak rates; see compute_model.h for how these combine.
struct Efficiency {
  double gemm_max = 0.8;  // best fraction of peak for large GEMMs
  int64_t tile_m = 128;   // output tile of the GEMM kernels (tile and wave quantization)
  int64_t tile_n = 256;
  double k_half = 128;     // reduction depth at which a GEMM's main loop runs at half rate
  double attention = 0.5;  // fused attention (flash style), fraction of peak
  // The attention backward kernel's own fraction of peak (0: `attention`, one rate for both).
  // Not a catalog key: predict sets it, with `attention`, from the framework profile's kernel and
  // its attention_forward_speedup (cost::attention_rates).
  double attention_backward = 0;
  double attention_flash2 =
      0;  // FlashAttention-2 forward+backward, fraction of peak (0: attention)
  double attention_flash3 = 0;  // FlashAttention-3 (Hopper only; 0: none, FA2's rate is used)
  // Query tokens per sequence at which the attention rates above were measured: a fused kernel
  // at another length runs at attention_sequence_factor of them (compute_model.h). 0: the rates
  // stand for no length (assumptions), and no length scales them.
  int64_t attention_seq = 0;
  double conv = 0.6;     // convolutions (implicit GEMM), fraction of peak
  double memory = 0.85;  // streaming kernels, fraction of memory bandwidth
  // Fraction of the burst rates above (gemm_max, attention, conv: short benchmarks at boost
  // clock) that tensor-core work sustains once the GPU runs at its power limit, as a training
  // step does (its SM clock settles below boost). 1: no public sustained figure.
  double sustained = 1.0;
  // Standard deviation of one GPU's sustained rate across the GPUs of a model, as a fraction of
  // its mean: a synchronous step waits for its slowest GPU (slowest_gpu_share). 0: not known.
  double sustained_spread = 0;
  // FP8 GEMMs (Hardware::peak_fp8): their best fraction of the FP8 peak and their k_half, in the
  // same shape function as gemm_max and k_half (compute_model.h). 0: no FP8 rate.
  double gemm_fp8_max = 0;
  double fp8_k_half = 0;
};

// The share of `sustained` a synchronous run of `gpus` GPUs computes at: that of its slowest GPU,
// 1 - sustained_spread * z(gpus), z(n) the expected largest of n standard normal draws (Blom's
// approximation; z(1) = 0).
double slowest_gpu_share(const Efficiency& e, int64_t gpus);
// z(n) above.
double expected_largest_normal(int64_t n);

struct Hardware {
  std::string name;  // catalog key: "h100-sxm"
  std::string description;
  std::string kind;  // "gpu" or "cpu"
  std::vector<std::string> sources;
  std::array<double, static_cast<size_t>(Precision::kCount)> peak_flops{};  // dense, per device
  // Dense FP8 tensor-core rate (catalog key peak_flops.fp8), what a GEMM of FP8 operands runs
  // against (model::OpCost::fp8; options.fp8). Not a Precision: FP8 is no run's element type, only
  // its linears' GEMM operands. 0: the device has none.
  double peak_fp8 = 0;
  double memory_bytes = 0;
  double memory_bandwidth_bytes_per_s = 0;
  int compute_units = 1;          // SMs (GPU) or cores (CPU)
  double launch_overhead_ns = 0;  // fixed cost per op
  // Thread blocks a large NCCL collective occupies, one SM each, which compute kernels cannot use
  // while it runs (0: none counted).
  int collective_ctas = 0;
  Efficiency efficiency;
  // cpu kind: cores the host has; ranks beyond them share cores (0: every device computes alone).
  int host_cores = 0;
  int devices_per_node = 1;
  int nics_per_node = 1;
  LinkTier intra_node;
  LinkTier inter_node;

  double peak(Precision p) const { return peak_flops[static_cast<size_t>(p)]; }
};

// Parses one catalog entry; `where` names the file in error messages. Throws std::runtime_error
// naming the missing or malformed key.
// Unknown keys, counts that are not whole numbers and values out of range are refused.
Hardware parse_hardware(const nlohmann::json& j, const std::string& where);
// Keys a hardware file may hold, dotted ("efficiency.gemm_max"): what docs/CONFIG.md's "Hardware
// files" section must describe.
std::vector<std::string> hardware_keys();
Hardware load_hardware_file(const std::string& path);

// Directories searched for "<name>.json", in order: $MESHSCOPE_CATALOG (colon-separated), then
// relative to the running executable: `../share/meshscope/catalog` (an installed tree),
// `../catalog` (a test program in build/tests/), `catalog/` (the copy the build puts beside the
// executables). Nothing is compiled in, so a moved or installed tree finds its catalog.
std::vector<std::string> catalog_dirs();
// `name_or_path` is a catalog name ("a100-80gb") or a path to a .json file. An unknown name throws
// std::runtime_error naming the directories searched and the entries found.
Hardware find_hardware(const std::string& name_or_path);
// find_hardware over `dirs` instead of catalog_dirs().
Hardware find_hardware_in(const std::string& name_or_path, const std::vector<std::string>& dirs);
// Names of every entry in the catalog directories (or `dirs`), sorted.
std::vector<std::string> list_hardware();
std::vector<std::string> list_hardware_in(const std::vector<std::string>& dirs);
// The data-file lookup behind find_hardware_in, for any kind of catalog entry (`what` and `hint`
// go into the error): the path of "<name>.json" in the first of `dirs` that has it.
std::string find_json_in(const std::string& name, const std::vector<std::string>& dirs,
                         const std::string& what, const std::string& hint);
// Throws std::runtime_error when an entry found as `asked` (its file name, at `path`) names
// itself otherwise (its "name" key): predictions report that name and take its published runs.
void require_catalog_name(const std::string& name, const std::string& asked,
                          const std::string& path);
// Stems of the .json files in `dirs`, sorted, without repeats.
std::vector<std::string> list_json_in(const std::vector<std::string>& dirs);

}  // namespace meshscope::cost
