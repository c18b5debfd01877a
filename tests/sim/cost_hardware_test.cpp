#include "sim/cost/hardware.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

namespace meshscope::cost {
namespace {

TEST(CostHardware, CatalogHoldsTheIssuesDevicesWithSources) {
  for (const char* name : {"a100-80gb", "h100-sxm", "h200-sxm", "cpu-local"}) {
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

}  // namespace
}  // namespace meshscope::cost
