#include "sim/cost/board.h"

namespace meshscope::cost {

std::string hardware_for_board(std::string_view board) {
  const auto has = [&](std::string_view part) {
    return board.find(part) != std::string_view::npos;
  };
  if (has("H100") && (has("HBM3") || has("H100 SXM"))) return "h100-sxm";
  if (has("H200")) return has("NVL") ? "" : "h200-sxm";  // the H200 NVL is a 600 W PCIe card
  if (has("A100-SXM4-80GB") || (has("A100 80GB") && has("SXM"))) return "a100-80gb";
  if (board == "NVIDIA B200" || board.starts_with("NVIDIA B200 ")) return "b200-sxm";
  return "";
}

}  // namespace meshscope::cost
