// `meshscope calibrate` reads what a trace ran on from its typed run descriptor ("meshscope_run":
// cores, gpu, process_group_backend; traces/run_descriptor.h), not from the display strings of
// its metadata: a trace that types a fact and has no string for it is checked by it, and an older
// trace with only the string is read the same (the importer types it).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

#include "cli_test_util.h"

namespace meshscope::cli_testing {
namespace {

const std::string kBin = std::string(MESHSCOPE_BINARY_DIR) + "/meshscope";
const std::string kCpuRun =
    std::string(MESHSCOPE_SOURCE_DIR) + "/tests/fixtures/meshscope_cpu/mlp_1f1b_pp2_4steps.json";

// The committed cpu run (2 ranks, no cores recorded) with `text` inserted after `after`.
fs::path cpu_run_with(const fs::path& dir, const std::string& after, const std::string& text) {
  std::string json = read_file(kCpuRun);
  const auto at = json.find(after);
  EXPECT_NE(at, std::string::npos) << after;
  json.insert(at + after.size(), text);
  const fs::path p = dir / "run.json";
  std::ofstream(p) << json;
  return p;
}

TEST(CalibrateRunFacts, TheCoresARunRecordedAreItsTypedCores) {
  const fs::path dir = temp_dir("calibrate_typed_cores");
  const fs::path out = dir / "c.json";
  // Typed, no string: the warning of ranks that shared a core, and the fit says the cores.
  const fs::path typed = cpu_run_with(dir, "\"meshscope_run\":{", "\"cores\":1,");
  Result r = shell(kBin + " calibrate " + typed.string() + " -o " + out.string());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find(typed.string() + ": its 2 ranks shared 1 core(s)"), std::string::npos)
      << r.err;
  const std::string on = nlohmann::json::parse(read_file(out)).at("fitted_on").at(0);
  EXPECT_NE(on.find(", 2 devices, 1 cores"), std::string::npos) << on;
  // An older run's string alone is read the same.
  const fs::path old = cpu_run_with(dir, "\"metadata\":{", "\"cores\":\"1\",");
  r = shell(kBin + " calibrate " + old.string() + " -o " + out.string());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find(old.string() + ": its 2 ranks shared 1 core(s)"), std::string::npos)
      << r.err;
  // Neither: no warning.
  r = shell(kBin + " calibrate " + kCpuRun + " -o " + out.string());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.find("shared"), std::string::npos) << r.err;
}

// meshscope's export of a profiled GPU job, its facts typed and no metadata strings.
fs::path profiled(const fs::path& dir, const std::string& gpu, const std::string& backend) {
  const fs::path p = dir / ("profiled_" + backend + ".json");
  std::ofstream(p) << R"({"meshscope":{"version":2,"metadata":{"source":"kineto"},"steps":[]},
"meshscope_run":{"source":"kineto","cores":0,"gpu":")"
                   << gpu << R"(","process_group_backend":")" << backend
                   << R"("},"traceEvents":[]})";
  return p;
}

TEST(CalibrateRunFacts, TheGpuAndProcessGroupBackendAreTheTypedOnes) {
  const fs::path dir = temp_dir("calibrate_typed_gpu");
  const fs::path out = dir / "c.json";
  // Without --hardware: the entry of the typed board.
  const fs::path h100 = profiled(dir, "NVIDIA H100 80GB HBM3", "nccl");
  Result r = shell(kBin + " calibrate " + h100.string() + " -o " + out.string());
  EXPECT_NE(r.err.find("meshscope: calibrate: --hardware h100-sxm, the catalog entry of the "
                       "traces' GPU \"NVIDIA H100 80GB HBM3\"\n"),
            std::string::npos)
      << r.err;
  // The typed backend: an nccl job is no cpu's profile, and the hint names the typed board.
  const fs::path other = profiled(dir, "NVIDIA H800", "nccl");
  r = shell(kBin + " calibrate " + other.string() + " --hardware cpu-local -o " + out.string());
  EXPECT_NE(r.err.find(other.string() + ": ran on the nccl backend, but --hardware cpu-local is a "
                                        "cpu (give --hardware the entry of its GPU, the trace's "
                                        "\"NVIDIA H800\", which no entry describes"),
            std::string::npos)
      << r.err;
  // A gloo job is no GPU's.
  const fs::path gloo = profiled(dir, "", "gloo");
  r = shell(kBin + " calibrate " + gloo.string() + " --hardware h100-sxm -o " + out.string());
  EXPECT_EQ(r.err, "meshscope: error: " + gloo.string() +
                       ": ran on the gloo backend, but --hardware h100-sxm is a gpu (use "
                       "--hardware cpu-local)\n");
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace meshscope::cli_testing
