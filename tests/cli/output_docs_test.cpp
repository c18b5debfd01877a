// docs/OUTPUT.md documents the JSON of `predict --json` and `analyze --json`: every key these
// commands print on the inputs below (one configuration, sweeps, a sweep with a failed
// combination, --search, --sensitivity, a configuration that does not fit, a hybrid-sharded one,
// a torch job replayed, and the analyses of a torch job and of a GPU trace with every section), and
// by `calibrate --gemm-rates --json` on a table and on a trace, appears in it, in backticks. A key
// added without its documentation fails here.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "tests/cli/cli_test_util.h"

namespace meshscope::cli_testing {
namespace {

const std::string kBin = std::string(MESHSCOPE_BINARY_DIR) + "/meshscope";
const fs::path kSource = fs::path(MESHSCOPE_SOURCE_DIR);
const fs::path kConfigs = kSource / "sim/predict/configs";
const fs::path kFixtures = kSource / "tests/fixtures";

// The keys of `j`, at every depth. The children of `sweep` (the config's swept keys) and of
// `host_gap_ns_by_rank` (ranks) are data, not names the output defines.
void collect_keys(const nlohmann::json& j, std::set<std::string>& keys) {
  if (j.is_array()) {
    for (const auto& v : j) collect_keys(v, keys);
    return;
  }
  if (!j.is_object()) return;
  for (const auto& [key, value] : j.items()) {
    keys.insert(key);
    if (key != "sweep" && key != "host_gap_ns_by_rank") collect_keys(value, keys);
  }
}

TEST(OutputDocs, EveryKeyThePredictAnalyzeAndGemmRatesJsonPrintIsDocumented) {
  const fs::path dir = temp_dir("output_docs");
  const fs::path failing_sweep = dir / "tp_over_heads.json";
  {
    // tp 16 does not divide the 24 heads: that combination is an {"error", "sweep"} row.
    std::ofstream out(failing_sweep);
    out << R"({"model": {"kind": "gpt", "layers": 24, "hidden": 2304, "heads": 24, "seq": 2048,
               "vocab": 51200},
               "mesh": {"dp": 8, "tp": [1, 16]}, "batch": {"global": 512, "micro": 1},
               "cluster": {"gpu": "a100-80gb"}})";
  }
  const std::string one = (kConfigs / "flashattn-gpt3-1.3b-8xa100.json").string();
  const std::vector<std::string> commands = {
      "predict --json --config " + one,
      "predict --json --config " + (kConfigs / "gpt-1.3b-sweep.json").string(),
      "predict --json --config " + (kConfigs / "schedule-sweep.json").string(),
      "predict --json --config " + failing_sweep.string(),
      "predict --json --search --gpus 8 --config " + one,
      "predict --json --sensitivity --config " + one,
      "predict --json --config " +
          (kConfigs / "torchtitan-llama2-70b-opsac-b2-oom-64xa100.json").string(),
      "predict --json --config " + (kConfigs / "fmsfsdp-llama2-7b-hsdp-128xa100.json").string(),
      "predict --json --from-trace " + (kFixtures / "torch/dp2_GPipe").string(),
      "analyze --json " + (kFixtures / "torch/GPipe").string(),
      "analyze --json --stragglers --critical-path " + (kFixtures / "torch/dp2_GPipe").string(),
      "analyze --json --kernels 5 --ranges 5 --stragglers --critical-path " +
          (kFixtures / "hta/h800_deepseek_v3_rank0.json.gz").string(),
      "analyze --json --window hta " + (kFixtures / "hta/h800_deepseek_v3_rank0.json.gz").string(),
      "calibrate --json --hardware h100-sxm --gemm-rates " +
          (kFixtures / "xla/h100_bf16_matmul.csv").string() + " --compare " +
          (kFixtures / "xla/h100_bf16_matmul.csv").string(),
      "calibrate --json --hardware h100-sxm --gemm-rates " +
          (kFixtures / "hta/b200_vllm_tp8_rank0_no_python.json.gz").string(),
  };
  const std::string doc = read_file(kSource / "docs/OUTPUT.md");
  std::set<std::string> documented;
  const std::regex ticked("`([^`]+)`");
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), ticked); it != std::sregex_iterator();
       ++it) {
    documented.insert((*it)[1].str());
  }
  std::set<std::string> printed;
  for (const std::string& command : commands) {
    const Result r = shell(kBin + " " + command);
    ASSERT_EQ(r.status, 0) << command << "\n" << r.err;
    std::set<std::string> keys;
    collect_keys(nlohmann::json::parse(r.out), keys);
    for (const std::string& key : keys) {
      EXPECT_TRUE(documented.count(key))
          << "`" << key << "` (from meshscope " << command << ") is not in docs/OUTPUT.md";
    }
    printed.insert(keys.begin(), keys.end());
  }
  // The inputs reach the sections the document describes.
  for (const char* key : {"would_fit", "error", "candidate", "profile_figures", "replayed_ranks",
                          "critical_path", "stragglers", "kernels", "peak_at"}) {
    EXPECT_TRUE(printed.count(key)) << key;
  }
}

}  // namespace
}  // namespace meshscope::cli_testing
