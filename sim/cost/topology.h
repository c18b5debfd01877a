// Where each device of a mesh sits: mesh dimensions laid out on nodes innermost first (tp, then
// cp, pp, dp by default, as Llama 3 orders them), and how a process group spans those nodes.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "sim/mesh/mesh.h"

namespace meshscope::cost {

// The dimensions a device index is made of. cp (context parallel) ranks are not part of the
// schedule's mesh: they run the same program, so they only matter for placement and group spans.
enum class MeshDim : uint8_t { kTp = 0, kCp = 1, kPp = 2, kDp = 3, kCount };
inline constexpr std::array<std::string_view, static_cast<size_t>(MeshDim::kCount)> kMeshDimNames =
    {"tp", "cp", "pp", "dp"};
using DimOrder = std::array<MeshDim, static_cast<size_t>(MeshDim::kCount)>;
inline constexpr DimOrder kDefaultOrder = {MeshDim::kTp, MeshDim::kCp, MeshDim::kPp, MeshDim::kDp};

// "tp,cp,pp,dp" (innermost first; every dimension once). A missing cp is put after tp.
std::optional<DimOrder> parse_dim_order(std::string_view s, std::string* error = nullptr);
std::string to_string(const DimOrder& order);

// How a group of devices spreads over nodes.
struct GroupSpan {
  int ranks = 1;
  int nodes = 1;
  int ranks_per_node = 1;  // the most members one node holds
};

class Topology {
 public:
  Topology(mesh::MeshShape shape, int cp, int devices_per_node, DimOrder order = kDefaultOrder);

  // Device index of a mesh rank (cp index 0) under the placement order; node = index / per node.
  int64_t device_index(int rank, int cp_index = 0) const;
  int node_of(int rank) const;
  bool same_node(int a, int b) const { return node_of(a) == node_of(b); }
  // Span of `rank`'s group along one mesh dimension (kWorld: the whole mesh, cp included; ep and
  // edp: the groups the mesh's ep carves out of dp, sim/mesh/mesh.h).
  GroupSpan span(mesh::GroupKind g, int rank) const;
  // The data-parallel group of `rank`: its dp ranks and, with context parallelism, each one's cp
  // devices, which hold the same parameters and reduce their gradients together (megatron-core's
  // dp_cp group, torchtitan's dp_shard_cp mesh; docs/ACCURACY.md item 46).
  GroupSpan data_parallel_span(int rank) const;
  // `size` > 0: only the aligned block of `size` members along d that holds `rank` (expert
  // parallel groups are such blocks of the dp dimension).
  GroupSpan span_of_dim(MeshDim d, int rank, int size = 0) const;
  int64_t num_devices() const;
  int num_nodes() const;

 private:
  int extent(MeshDim d) const { return extents_[static_cast<size_t>(d)]; }
  // The span of `count` devices base + i * step.
  GroupSpan members_span(int64_t base, int64_t step, int count) const;
  int64_t stride(MeshDim d) const { return strides_[static_cast<size_t>(d)]; }

  mesh::Mesh mesh_;
  int devices_per_node_;
  std::array<int, 4> extents_{};
  std::array<int64_t, 4> strides_{};
};

}  // namespace meshscope::cost
