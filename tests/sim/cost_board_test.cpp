// Which catalog entry a GPU board is measured against: the C++ rule (a GPU test on a lent machine
// compares its rates with that entry) and scripts/gpu-check.sh's board_entry (which names the
// entry in the check's table) must agree, and every entry they name must exist.
#include "sim/cost/board.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/cost/hardware.h"

namespace meshscope::cost {
namespace {

// Boards by the names their drivers give them, and the entry each is measured against.
const std::vector<std::pair<std::string, std::string>> kBoards = {
    {"NVIDIA H100 80GB HBM3", "h100-sxm"},
    {"NVIDIA H100 PCIe", ""},  // 350 W, fewer SMs: not the SXM part
    {"NVIDIA H100 NVL", ""},
    {"NVIDIA H200", "h200-sxm"},
    {"NVIDIA H200 NVL", ""},  // a 600 W PCIe card
    {"NVIDIA A100-SXM4-80GB", "a100-80gb"},
    {"NVIDIA A100-SXM4-40GB", ""},
    {"NVIDIA A100 80GB PCIe", ""},
    {"NVIDIA B200", "b200-sxm"},
    {"NVIDIA GB200", ""},  // another node and another peak
    {"NVIDIA H800", ""},
    {"Tesla V100-SXM2-32GB", ""},
};

// scripts/gpu-check.sh's board_entry, run by bash on `board`.
std::string script_board_entry(const std::string& board) {
  const std::string script = std::string(MESHSCOPE_SOURCE_DIR) + "/scripts/gpu-check.sh";
  const std::string command =
      "bash -c 'eval \"$(sed -n \"/^board_entry() {/,/^}/p\" \"$0\")\"; "
      "board_entry \"$1\"' '" +
      script + "' '" + board + "'";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) return "(popen failed)";
  std::string out;
  std::array<char, 256> buffer{};
  while (std::fgets(buffer.data(), buffer.size(), pipe.get()) != nullptr) out += buffer.data();
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

TEST(CostBoard, EachBoardIsMeasuredAgainstTheEntryThatDescribesItAndTheScriptAgrees) {
  for (const auto& [board, entry] : kBoards) {
    EXPECT_EQ(hardware_for_board(board), entry) << board;
    EXPECT_EQ(script_board_entry(board), entry) << board << ": scripts/gpu-check.sh board_entry";
    if (!entry.empty()) {
      EXPECT_EQ(find_hardware(entry).name, entry) << board;
    }
  }
}

}  // namespace
}  // namespace meshscope::cost
