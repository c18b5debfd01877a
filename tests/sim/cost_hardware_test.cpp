#include "sim/cost/hardware.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/cost/compute_model.h"

namespace meshscope::cost {
namespace {

TEST(CostHardware, CatalogHoldsTheIssuesDevicesWithSources) {
  for (const char* name : {"a100-80gb", "h100-sxm", "h200-sxm", "b200-sxm", "cpu-local"}) {
    const Hardware hw = find_hardware(name);
    EXPECT_EQ(hw.name, name);
    EXPECT_FALSE(hw.sources.empty()) << name;
    EXPECT_GT(hw.memory_bytes, 0);
    EXPECT_GT(hw.intra_node.bandwidth_bytes_per_s, 0);
  }
  const Hardware h100 = find_hardware("h100-sxm");
  EXPECT_DOUBLE_EQ(h100.peak(Precision::kBf16), 989.4e12);
  EXPECT_EQ(h100.devices_per_node, 8);
  EXPECT_EQ(h100.inter_node.kind, LinkKind::kNet);
  EXPECT_GT(find_hardware("h200-sxm").memory_bytes, h100.memory_bytes);
  const Hardware b200 = find_hardware("b200-sxm");
  EXPECT_DOUBLE_EQ(b200.peak(Precision::kBf16), 2250e12);
  EXPECT_DOUBLE_EQ(b200.peak_fp8, 4500e12);
  EXPECT_EQ(b200.compute_units, 148);
  EXPECT_GT(b200.memory_bytes, find_hardware("h200-sxm").memory_bytes);
}

// Every entry in the source tree's catalog is copied beside the executables (and installed), so
// `cluster.gpu` finds it by name wherever meshscope runs.
TEST(CostHardware, EveryCatalogEntryInTheSourceTreeIsShipped) {
  const std::vector<std::string> in_tree =
      list_json_in({std::string(MESHSCOPE_SOURCE_DIR) + "/sim/cost/catalog"});
  const std::vector<std::string> shipped = list_hardware();
  EXPECT_GE(in_tree.size(), 5u);
  for (const std::string& name : in_tree)
    EXPECT_NE(std::find(shipped.begin(), shipped.end(), name), shipped.end())
        << name << ".json is not in MESHSCOPE_CATALOG_FILES (sim/cost/CMakeLists.txt)";
}

// The B200's ceilings are what its sources measured, read the way the H100's are: the best rate
// mamf-finder found over shapes is the model's best over shapes (deep-k shapes in whole waves of
// the 148 SMs, k up to 20480), bf16 and FP8; its sustained share is MSMF over MAMF of the same
// all-8 runs (sim/cost/catalog/b200-sxm.json's sources).
TEST(CostHardware, TheB200sCeilingsAreItsMeasuredMaximaOverShapes) {
  const Hardware b200 = find_hardware("b200-sxm");
  double best = 0, best_fp8 = 0;
  for (int64_t m = 128; m <= 20480; m += 128)
    for (int64_t n : {256, 512, 1024, 2048, 4096, 16128})
      for (int64_t k : {3072, 8192, 20480}) {
        best = std::max(best, gemm_efficiency(b200, m, n, k));
        best_fp8 = std::max(best_fp8, gemm_fp8_efficiency(b200, m, n, k));
      }
  // ml-engineering's comparison tables: 1,745.0 (bf16) and 3,432.5 (FP8) TFLOP/s.
  EXPECT_NEAR(best * b200.peak(Precision::kBf16) / 1e12, 1745.0, 1745.0 * 0.001);
  EXPECT_NEAR(best_fp8 * b200.peak_fp8 / 1e12, 3432.5, 3432.5 * 0.001);
  // A shape without whole waves runs below the maximum (148 SMs, not the Hopper's 132).
  EXPECT_LT(gemm_efficiency(b200, 128 * 132, 256, 20480), best * 0.95);
  // All 8 GPUs computing: MSMF 1,426.4 against MAMF 1,751.2 TFLOP/s.
  EXPECT_NEAR(b200.efficiency.sustained, 1426.4 / 1751.2, 0.001);
  EXPECT_NEAR(b200.efficiency.sustained_spread, 0.104 / 4.322, 0.0001);
}

TEST(CostHardware, UnknownNameListsTheCatalog) {
  try {
    find_hardware("tpu-v9");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("a100-80gb"), std::string::npos) << e.what();
  }
}

TEST(CostHardware, AMissingCatalogSaysWhereItLookedAndHowToPointAtOne) {
  const std::string nowhere =
      (std::filesystem::temp_directory_path() / "meshscope_no_catalog_here").string();
  EXPECT_TRUE(list_hardware_in({nowhere}).empty());
  try {
    find_hardware_in("a100-80gb", {nowhere});
    FAIL();
  } catch (const std::runtime_error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(nowhere + " (missing)"), std::string::npos) << m;
    EXPECT_NE(m.find("no catalog found"), std::string::npos) << m;
    EXPECT_NE(m.find("MESHSCOPE_CATALOG"), std::string::npos) << m;
  }
}

TEST(CostHardware, TheCatalogNextToTheExecutableIsSearchedLast) {
  // A build tree moved away from its sources still finds the copy the build puts beside it.
  const std::vector<std::string> dirs = catalog_dirs();
  ASSERT_FALSE(dirs.empty());
  const auto exe = std::filesystem::read_symlink("/proc/self/exe");
  EXPECT_EQ(std::filesystem::path(dirs.back()), exe.parent_path() / "catalog");
}

TEST(CostHardware, UsersExtendTheCatalogWithoutRecompiling) {
  const auto dir = std::filesystem::temp_directory_path() / "meshscope_catalog_test";
  std::filesystem::create_directories(dir);
  nlohmann::json j = {
      {"name", "toy"},
      {"sources", {"made up for a test"}},
      {"peak_flops", {{"bf16", 1e12}}},
      {"memory_bytes", 1e9},
      {"memory_bandwidth_bytes_per_s", 1e11},
      {"compute_units", 4},
      {"devices_per_node", 2},
      {"intra_node", {{"kind", "nvlink"}, {"bandwidth_bytes_per_s", 1e10}, {"latency_ns", 1000}}},
      {"inter_node", {{"kind", "net"}, {"bandwidth_bytes_per_s", 1e9}, {"latency_ns", 5000}}}};
  std::ofstream(dir / "toy.json") << j.dump();
  setenv("MESHSCOPE_CATALOG", dir.c_str(), 1);
  const Hardware hw = find_hardware("toy");
  unsetenv("MESHSCOPE_CATALOG");
  EXPECT_EQ(hw.devices_per_node, 2);
  EXPECT_DOUBLE_EQ(hw.inter_node.bandwidth_bytes_per_s, 1e9);
  // A path works too, and a missing key is named.
  EXPECT_EQ(find_hardware((dir / "toy.json").string()).name, "toy");
  j.erase("memory_bytes");
  std::ofstream(dir / "bad.json") << j.dump();
  try {
    load_hardware_file((dir / "bad.json").string());
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("'memory_bytes'"), std::string::npos) << e.what();
  }
  std::ofstream(dir / "broken.json") << "{\"name\": ";
  EXPECT_THROW(load_hardware_file((dir / "broken.json").string()), std::runtime_error);
  std::filesystem::remove_all(dir);
}

// A hardware file is the user's to write (`cluster.gpu` may be a path): a misspelt key would leave
// its figure at the default and change every prediction without a word, and a count beyond an
// int would wrap. Each is refused with the file and the key as the file nests it.
TEST(CostHardware, AHardwareFileWithAnUnknownKeyOrABadCountIsRefused) {
  const auto dir = std::filesystem::temp_directory_path() / "meshscope_hardware_strict_test";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "hw.json").string();
  const auto error_of = [&](const std::function<void(nlohmann::json&)>& edit) -> std::string {
    std::ifstream in(std::string(MESHSCOPE_SOURCE_DIR) + "/sim/cost/catalog/a100-80gb.json");
    nlohmann::json j = nlohmann::json::parse(in);
    edit(j);
    std::ofstream(path) << j.dump();
    try {
      load_hardware_file(path);
    } catch (const std::runtime_error& e) {
      const std::string m = e.what();
      return m.rfind(path + ": ", 0) == 0 ? m.substr(path.size() + 2) : m;
    }
    return "(loaded)";
  };
  EXPECT_EQ(error_of([](nlohmann::json&) {}), "(loaded)");
  // A misspelt key at each level the file nests: the error begins with the key, dotted.
  const std::pair<const char*, const char*> misspelt[] = {
      {"/compute_unit", "key 'compute_unit': unknown key (known: name, "},
      {"/efficiency/gemm", "key 'efficiency.gemm': unknown key"},
      {"/inter_node/bw", "key 'inter_node.bw': unknown key"},
      {"/peak_flops/fp4", "key 'peak_flops.fp4': unknown key (known: bf16, fp16, fp32, tf32, fp8)"},
      // An FP8 peak without the share its GEMMs reach would price them at an unstated rate.
      {"/peak_flops/fp8", "key 'efficiency.gemm_fp8_max': is needed with peak_flops.fp8"}};
  for (const auto& [pointer, begins] : misspelt) {
    const std::string e =
        error_of([&](nlohmann::json& j) { j[nlohmann::json::json_pointer(pointer)] = 1; });
    EXPECT_EQ(e.rfind(begins, 0), 0u) << e;
  }
  EXPECT_EQ(error_of([](nlohmann::json& j) { j["compute_units"] = 3e9; }),
            "key 'compute_units': must be a whole number in [1, 16777216]");
  EXPECT_EQ(error_of([](nlohmann::json& j) { j["compute_units"] = 107.5; }),
            "key 'compute_units': must be a whole number in [1, 16777216]");
  EXPECT_EQ(error_of([](nlohmann::json& j) { j["efficiency"]["tile_m"] = 1e30; }),
            "key 'efficiency.tile_m': must be a whole number in [1, 65536]");
  EXPECT_EQ(error_of([](nlohmann::json& j) { j["efficiency"]["attention_seq"] = 0; }),
            "key 'efficiency.attention_seq': must be a whole number in [1, 16777216]");
  EXPECT_EQ(error_of([](nlohmann::json& j) { j["efficiency"]["attention_seq"] = 2048.5; }),
            "key 'efficiency.attention_seq': must be a whole number in [1, 16777216]");
  EXPECT_EQ(error_of([](nlohmann::json& j) { j["intra_node"]["name"] = 5; }),
            "key 'intra_node.name': must be a string");
  EXPECT_EQ(error_of([](nlohmann::json& j) { j["sources"] = "a datasheet"; }),
            "key 'sources': must be a list of strings");
  EXPECT_EQ(error_of([](nlohmann::json& j) { j["peak_flops"]["bf16"] = 0; }),
            "key 'peak_flops.bf16': must be >= 1");
  // Figures far past any device are typos: a peak of 1e300 had printed an MFU of 8.9e-288%.
  const std::string typo = " (far past any device: a typo? The bounds: sim/cost/hardware.h)";
  EXPECT_EQ(error_of([](nlohmann::json& j) { j["peak_flops"]["bf16"] = 1e300; }),
            "key 'peak_flops.bf16': must be at most 1e+18" + typo);
  EXPECT_EQ(error_of([](nlohmann::json& j) { j["peak_flops"]["fp8"] = 2e18; }),
            "key 'peak_flops.fp8': must be at most 1e+18" + typo);
  EXPECT_EQ(error_of([](nlohmann::json& j) { j["memory_bytes"] = 80e18; }),
            "key 'memory_bytes': must be at most 1e+15" + typo);
  EXPECT_EQ(error_of([](nlohmann::json& j) { j["memory_bandwidth_bytes_per_s"] = 3.35e18; }),
            "key 'memory_bandwidth_bytes_per_s': must be at most 1e+16" + typo);
  EXPECT_EQ(error_of([](nlohmann::json& j) { j["inter_node"]["bandwidth_bytes_per_s"] = 1e17; }),
            "key 'inter_node.bandwidth_bytes_per_s': must be at most 1e+16" + typo);
  EXPECT_EQ(error_of([](nlohmann::json& j) { j["intra_node"]["latency_ns"] = 3e9; }),
            "key 'intra_node.latency_ns': must be at most 1e+09" + typo);
  EXPECT_EQ(error_of([](nlohmann::json& j) { j["launch_overhead_ns"] = 1e10; }),
            "key 'launch_overhead_ns': must be at most 1e+09" + typo);
  // A what-if device a hundred times a B200 still reads.
  EXPECT_EQ(error_of([](nlohmann::json& j) {
              j["peak_flops"]["bf16"] = 2.25e17;
              j["memory_bandwidth_bytes_per_s"] = 8e14;
            }),
            "(loaded)");
  EXPECT_EQ(error_of([](nlohmann::json& j) { j["efficiency"]["memory"] = 1.5; }),
            "key 'efficiency.memory': must be in (0, 1]");
  EXPECT_EQ(error_of([](nlohmann::json& j) { j["efficiency"]["sustained_spread"] = 0.2; }),
            "key 'efficiency.sustained_spread': must be in [0, 0.1]");
  EXPECT_EQ(error_of([](nlohmann::json& j) { j["efficiency"]["sustained_spread"] = -0.01; }),
            "key 'efficiency.sustained_spread': must be >= 0");
  // A switch that reduces is an NVSwitch: not the network's.
  EXPECT_EQ(
      error_of([](nlohmann::json& j) { j["inter_node"]["nvls_bus_bandwidth_bytes_per_s"] = 1e9; }),
      "key 'inter_node.nvls_bus_bandwidth_bytes_per_s': is an NVSwitch's (kind nvlink), not a "
      "net tier's");
  std::filesystem::remove_all(dir);
}

TEST(CostHardware, ARunComputesAtItsSlowestGpusRate) {
  // The expected largest of n standard normal draws, against the exact values (Harter 1961's
  // tables of normal order statistics): Blom's approximation is within 0.03 of them.
  const std::pair<int64_t, double> exact[] = {
      {2, 0.5642}, {8, 1.4236}, {100, 2.5076}, {1000, 3.2414}};
  for (const auto& [n, z] : exact) EXPECT_NEAR(expected_largest_normal(n), z, 0.03) << n;
  EXPECT_EQ(expected_largest_normal(1), 0);
  EXPECT_EQ(expected_largest_normal(0), 0);
  // More GPUs, a slower slowest one; one GPU, or no spread, runs at the mean.
  Efficiency e;
  e.sustained_spread = 0.0104;
  EXPECT_EQ(slowest_gpu_share(e, 1), 1);
  EXPECT_NEAR(slowest_gpu_share(e, 8), 1 - 0.0104 * expected_largest_normal(8), 1e-12);
  EXPECT_LT(slowest_gpu_share(e, 16384), slowest_gpu_share(e, 2048));
  EXPECT_GT(slowest_gpu_share(e, 16384), 0.95);
  EXPECT_EQ(slowest_gpu_share(Efficiency{}, 16384), 1);
  // The Hopper entries carry the figure; the A100's has none (no source measures it).
  EXPECT_DOUBLE_EQ(find_hardware("h100-sxm").efficiency.sustained_spread, 0.0104);
  EXPECT_DOUBLE_EQ(find_hardware("h200-sxm").efficiency.sustained_spread, 0.0104);
  EXPECT_EQ(find_hardware("a100-80gb").efficiency.sustained_spread, 0);
}

TEST(CostHardware, EveryKeyAHardwareFileMayHoldIsDocumented) {
  std::ifstream in(std::string(MESHSCOPE_SOURCE_DIR) + "/docs/CONFIG.md");
  ASSERT_TRUE(in) << "docs/CONFIG.md";
  std::stringstream doc;
  doc << in.rdbuf();
  const std::string text = doc.str();
  const size_t section = text.find("## Hardware files");
  ASSERT_NE(section, std::string::npos);
  const std::vector<std::string> keys = hardware_keys();
  EXPECT_GT(keys.size(), 30u);
  for (const std::string& k : keys)
    EXPECT_NE(text.find("`" + k + "`", section), std::string::npos)
        << k << " is not in docs/CONFIG.md's hardware section";
}

}  // namespace
}  // namespace meshscope::cost
