// Placement of mesh ranks on nodes.
#include "sim/cost/topology.h"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>
#include <vector>

namespace meshscope::cost {

std::optional<DimOrder> parse_dim_order(std::string_view s, std::string* error) {
  std::vector<MeshDim> dims;
  size_t pos = 0;
  while (pos <= s.size()) {
    const size_t comma = s.find(',', pos);
    const std::string_view tok =
        s.substr(pos, comma == std::string_view::npos ? s.npos : comma - pos);
    auto it = std::find(kMeshDimNames.begin(), kMeshDimNames.end(), tok);
    if (it == kMeshDimNames.end()) {
      if (error) *error = "unknown mesh dimension '" + std::string(tok) + "' (use tp, cp, pp, dp)";
      return std::nullopt;
    }
    const auto d = static_cast<MeshDim>(it - kMeshDimNames.begin());
    if (std::find(dims.begin(), dims.end(), d) != dims.end()) {
      if (error) *error = "mesh dimension '" + std::string(tok) + "' given twice";
      return std::nullopt;
    }
    dims.push_back(d);
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  if (std::find(dims.begin(), dims.end(), MeshDim::kCp) == dims.end()) {
    auto tp = std::find(dims.begin(), dims.end(), MeshDim::kTp);
    dims.insert(tp == dims.end() ? dims.begin() : tp + 1, MeshDim::kCp);
  }
  if (dims.size() != 4) {
    if (error) *error = "placement must name tp, pp and dp (cp optional)";
    return std::nullopt;
  }
  return DimOrder{dims[0], dims[1], dims[2], dims[3]};
}

std::string to_string(const DimOrder& order) {
  std::string s;
  for (MeshDim d : order)
    s += (s.empty() ? "" : ",") + std::string(kMeshDimNames[static_cast<size_t>(d)]);
  return s;
}

Topology::Topology(mesh::MeshShape shape, int cp, int devices_per_node, DimOrder order)
    : mesh_(shape), devices_per_node_(devices_per_node) {
  if (cp < 1) throw std::invalid_argument("topology: cp must be >= 1");
  if (devices_per_node < 1) throw std::invalid_argument("topology: devices_per_node must be >= 1");
  extents_ = {shape.tp, cp, shape.pp, shape.dp};
  int64_t s = 1;
  for (MeshDim d : order) {
    strides_[static_cast<size_t>(d)] = s;
    s *= extent(d);
  }
}

int64_t Topology::device_index(int rank, int cp_index) const {
  const mesh::MeshCoord c = mesh_.coord_of(rank);
  return c.tp * stride(MeshDim::kTp) + cp_index * stride(MeshDim::kCp) +
         c.pp * stride(MeshDim::kPp) + c.dp * stride(MeshDim::kDp);
}

int Topology::node_of(int rank) const {
  return static_cast<int>(device_index(rank) / devices_per_node_);
}

int64_t Topology::num_devices() const {
  return int64_t{extents_[0]} * extents_[1] * extents_[2] * extents_[3];
}

int Topology::num_nodes() const {
  return static_cast<int>((num_devices() + devices_per_node_ - 1) / devices_per_node_);
}

GroupSpan Topology::span_of_dim(MeshDim d, int rank, int size) const {
  const mesh::MeshCoord c = mesh_.coord_of(rank);
  const int64_t own = d == MeshDim::kTp   ? c.tp
                      : d == MeshDim::kPp ? c.pp
                      : d == MeshDim::kDp ? c.dp
                                          : 0;
  if (size > 0 && size < extent(d)) {
    return members_span(device_index(rank) - (own % size) * stride(d), stride(d), size);
  }
  return members_span(device_index(rank) - own * stride(d), stride(d), extent(d));
}

GroupSpan Topology::members_span(int64_t base, int64_t step, int count) const {
  // Members are base + i * step: count members per node (nodes are contiguous index ranges).
  GroupSpan span;
  span.ranks = count;
  int nodes = 0, best = 0, run = 0;
  int64_t prev_node = -1;
  for (int i = 0; i < count; ++i) {
    const int64_t node = (base + i * step) / devices_per_node_;
    if (node != prev_node) {
      ++nodes;
      run = 0;
      prev_node = node;
    }
    best = std::max(best, ++run);
  }
  span.nodes = nodes;
  span.ranks_per_node = best;
  return span;
}

GroupSpan Topology::data_parallel_span(int rank) const {
  const int cp = extent(MeshDim::kCp);
  if (cp == 1) return span_of_dim(MeshDim::kDp, rank);
  // The dp x cp devices of the rank's tp and pp coordinates, wherever the placement puts them.
  const int dp = extent(MeshDim::kDp);
  const int64_t base = device_index(rank) - mesh_.coord_of(rank).dp * stride(MeshDim::kDp);
  std::vector<int64_t> nodes;
  nodes.reserve(static_cast<size_t>(dp) * cp);
  for (int j = 0; j < dp; ++j)
    for (int i = 0; i < cp; ++i)
      nodes.push_back((base + j * stride(MeshDim::kDp) + i * stride(MeshDim::kCp)) /
                      devices_per_node_);
  std::sort(nodes.begin(), nodes.end());
  GroupSpan span;
  span.ranks = dp * cp;
  span.nodes = 0;
  span.ranks_per_node = 0;
  for (size_t i = 0; i < nodes.size();) {
    size_t j = i;
    while (j < nodes.size() && nodes[j] == nodes[i]) ++j;
    ++span.nodes;
    span.ranks_per_node = std::max(span.ranks_per_node, static_cast<int>(j - i));
    i = j;
  }
  return span;
}

GroupSpan Topology::span(mesh::GroupKind g, int rank) const {
  const int ep = mesh_.shape().ep;
  switch (g) {
    case mesh::GroupKind::kTp:
      return span_of_dim(MeshDim::kTp, rank);
    case mesh::GroupKind::kPp:
      return span_of_dim(MeshDim::kPp, rank);
    case mesh::GroupKind::kDp:
      return data_parallel_span(rank);
    case mesh::GroupKind::kEp:
      return span_of_dim(MeshDim::kDp, rank, ep);
    case mesh::GroupKind::kEdp: {
      // Every ep-th dp replica, from the first of the rank's ep rank.
      const int own = mesh_.coord_of(rank).dp;
      return members_span(device_index(rank) - (own - own % ep) * stride(MeshDim::kDp),
                          ep * stride(MeshDim::kDp), extent(MeshDim::kDp) / ep);
    }
    case mesh::GroupKind::kWorld:
    case mesh::GroupKind::kCount:
      break;
  }
  GroupSpan span;
  span.ranks = static_cast<int>(num_devices());
  span.nodes = num_nodes();
  span.ranks_per_node = static_cast<int>(std::min<int64_t>(devices_per_node_, num_devices()));
  return span;
}

}  // namespace meshscope::cost
