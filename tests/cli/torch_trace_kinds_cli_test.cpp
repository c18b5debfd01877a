// `predict --from-trace` on torch jobs that are not one profiled training step: it says what they
// are. Each job is a committed torch 2.15 fixture (tests/fixtures/torch) with events taken out as
// the job would have lacked them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "tests/cli/cli_test_util.h"

namespace meshscope::cli_testing {
namespace {

const std::string kBin = std::string(MESHSCOPE_BINARY_DIR) + "/meshscope";
const fs::path kTorch = fs::path(MESHSCOPE_SOURCE_DIR) / "tests/fixtures/torch";

// `job`'s rank files written into a fresh folder, each with only the events `keep` accepts.
fs::path filtered_job(const std::string& job, const std::string& name,
                      const std::function<bool(const nlohmann::json&)>& keep) {
  const fs::path dir = temp_dir(name);
  for (const auto& entry : fs::directory_iterator(kTorch / job)) {
    const std::string file = entry.path().filename().string();
    if (!file.ends_with(".json.gz")) continue;
    const Result text = shell("gzip -dc " + entry.path().string());
    EXPECT_EQ(text.status, 0) << text.err;
    nlohmann::json trace = nlohmann::json::parse(text.out);
    nlohmann::json kept = nlohmann::json::array();
    for (const nlohmann::json& e : trace["traceEvents"])
      if (keep(e)) kept.push_back(e);
    trace["traceEvents"] = kept;
    std::ofstream(dir / file.substr(0, file.size() - 3)) << trace.dump();
  }
  return dir;
}

std::string name_of(const nlohmann::json& e) {
  return e.contains("name") && e["name"].is_string() ? e["name"].get<std::string>() : "";
}

// A plain `with profile():` around two iterations, no prof.step(): the ranks' actions are the
// schedule twice. Had been refused as "not a whole one ... Does a rank's trace end inside its
// step?", which it does not.
TEST(TorchTraceKinds, TwoIterationsWithoutStepMarksAreSaidToBeSo) {
  const fs::path dir = filtered_job(
      "InterleavedZeroBubble_2steps", "torch_no_step_marks",
      [](const nlohmann::json& e) { return !name_of(e).starts_with("ProfilerStep#"); });
  const Result r = shell(kBin + " predict --from-trace " + dir.string());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find(dir.string() +
                       ": the traces hold 2 iterations of the schedule and no ProfilerStep marks "
                       "between them"),
            std::string::npos)
      << r.err;
  // Its first iteration alone, as any one profiled step, is no repetition.
  EXPECT_EQ(
      shell(kBin + " predict --from-trace " + (kTorch / "InterleavedZeroBubble").string()).status,
      0);
}

// torch's _ScheduleForwardOnly (an inference pipeline) runs no backward: said as what it is, not
// as a training step whose trace ended early.
TEST(TorchTraceKinds, AForwardOnlyJobIsSaidToBeOne) {
  const std::regex gradient_work("PP:\\d+(B|I|W|SEND_B|RECV_B|WAIT_SEND_B)\\d+");
  const fs::path dir = filtered_job(
      "Interleaved1F1B", "torch_forward_only",
      [&](const nlohmann::json& e) { return !std::regex_match(name_of(e), gradient_work); });
  for (const char* command : {" predict --from-trace ", " schedules --from-trace "}) {
    const Result r = shell(kBin + command + dir.string());
    EXPECT_EQ(r.status, 1) << command;
    EXPECT_NE(r.err.find(dir.string() + ": the job ran forwards only (no backward on any rank"),
              std::string::npos)
        << command << r.err;
  }
}

}  // namespace
}  // namespace meshscope::cli_testing
