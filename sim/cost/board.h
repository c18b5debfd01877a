// Which catalog entry describes a GPU, by the name its driver gives the board.
#pragma once

#include <string>
#include <string_view>

namespace meshscope::cost {

// The catalog entry (catalog/<name>.json) that describes `board`, the name the driver gives it
// (cudaDeviceProp::name, nvidia-smi's name: "NVIDIA H100 80GB HBM3"), or "" when none does. An
// H100 SXM, an H200 SXM, an A100 SXM4 80GB and a B200 have one; a PCIe or NVL card, a GB200 and
// anything else have none: another power limit, node or peak than the entries describe.
// scripts/gpu-check.sh's board_entry holds the same rules (tests/sim/cost_board_test.cpp reads
// them out of the script and checks both name the same entry for each board).
std::string hardware_for_board(std::string_view board);

}  // namespace meshscope::cost
