// Kineto category, stream and rank of meshscope's spans for the Chrome export.
#include "traces/chrome_kineto.h"

#include <string>

#include "traces/number_text.h"

namespace meshscope::traces {
namespace {

bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }

std::optional<int64_t> metadata_int(const Timeline& t, const std::string& key) {
  const auto it = t.metadata.find(key);
  return it == t.metadata.end() ? std::nullopt : parse_whole_int(it->second);
}

}  // namespace

std::string_view kineto_category(SpanKind kind, LaneKind lane, std::string_view name) {
  switch (kind) {
    case SpanKind::kCompute:
    case SpanKind::kSend:
    case SpanKind::kRecv:
    case SpanKind::kCollective:
      return "kernel";
    case SpanKind::kMemcpy:
      return "gpu_memcpy";
    case SpanKind::kMemset:
      return "gpu_memset";
    case SpanKind::kHost:
      // CUDA's API prefixes: cudaLaunchKernel (runtime), cuLaunchKernel (driver).
      if (name.starts_with("cuda") && name.size() > 4 && is_upper(name[4])) return "cuda_runtime";
      if (name.starts_with("cu") && name.size() > 2 && is_upper(name[2])) return "cuda_driver";
      return "cpu_op";
    case SpanKind::kAnnotation:
      return lane == LaneKind::kHost ? "user_annotation" : "gpu_user_annotation";
    default:
      return "idle";
  }
}

int64_t kineto_stream(const Lane& lane, size_t index) {
  constexpr std::string_view kPrefix = "stream ";
  if (std::string_view(lane.name).starts_with(kPrefix)) {
    if (const auto id = parse_whole_int(std::string_view(lane.name).substr(kPrefix.size())))
      return *id;
  }
  return static_cast<int64_t>(index);
}

std::optional<RankInfo> one_rank(const Timeline& t) {
  if (t.devices.empty()) return std::nullopt;
  const int rank = t.devices.front().rank;
  bool all_placed = true;
  for (const Device& d : t.devices) {
    if (d.rank != rank) return std::nullopt;
    all_placed = all_placed && d.coord.dp >= 0 && d.coord.pp >= 0 && d.coord.tp >= 0;
  }
  const auto said = metadata_int(t, "rank");
  if (said ? *said != rank : !all_placed) return std::nullopt;
  return RankInfo{rank, metadata_int(t, "world_size")};
}

}  // namespace meshscope::traces
