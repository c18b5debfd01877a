// The memory a prediction may plan to use (traces/host_memory.h, memory_limit): the machine's, or
// less when a cgroup, `ulimit -v` or $MESHSCOPE_MEMORY_LIMIT says so; a configuration beyond it is
// refused up front, naming what set the limit.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/predict/config.h"
#include "tests/sim/config_error.h"
#include "traces/host_memory.h"

namespace meshscope::predict {
namespace {

using testing::error_of;
using traces::memory_limit;
using traces::MemoryLimit;
using traces::parse_memory_limit;

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (had_)
      ::setenv(name_, old_.c_str(), 1);
    else
      ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

TEST(PredictMemoryBudget, ReadsTheLimitsForms) {
  EXPECT_EQ(parse_memory_limit("4294967296"), 4294967296.0);
  EXPECT_EQ(parse_memory_limit("512M"), 512.0 * 1024 * 1024);
  EXPECT_EQ(parse_memory_limit("4g"), 4.0 * 1024 * 1024 * 1024);
  EXPECT_EQ(parse_memory_limit("1.5T"), 1.5 * 1024 * 1024 * 1024 * 1024);
  EXPECT_EQ(parse_memory_limit("64K"), 64.0 * 1024);
  for (const char* bad : {"", "G", "abc", "4GB", "4 G", "-1", "0", "nan", "inf", "4X"})
    EXPECT_LT(parse_memory_limit(bad), 0) << bad;
}

TEST(PredictMemoryBudget, TheEnvironmentLowersTheBudgetButNeverRaisesIt) {
  const MemoryLimit machine = memory_limit();
  ASSERT_GT(machine.bytes, 64.0 * 1024 * 1024);
  {
    ScopedEnv limit("MESHSCOPE_MEMORY_LIMIT", "64M");
    const MemoryLimit b = memory_limit();
    EXPECT_EQ(b.bytes, 64.0 * 1024 * 1024);
    EXPECT_EQ(b.source, "MESHSCOPE_MEMORY_LIMIT allows 64.0 MiB");
    EXPECT_TRUE(b.set);
    // What `run` and the viewer may still allocate is lowered to it too.
    ASSERT_TRUE(traces::available_memory_bytes().has_value());
    EXPECT_LE(*traces::available_memory_bytes(), b.bytes);
  }
  {
    ScopedEnv limit("MESHSCOPE_MEMORY_LIMIT", "1024T");
    EXPECT_EQ(memory_limit().bytes, machine.bytes);
    EXPECT_EQ(memory_limit().source, machine.source);
  }
}

TEST(PredictMemoryBudget, AMalformedLimitIsAnErrorNotIgnored) {
  ScopedEnv limit("MESHSCOPE_MEMORY_LIMIT", "lots");
  try {
    memory_limit();
    FAIL() << "accepted MESHSCOPE_MEMORY_LIMIT=lots";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("MESHSCOPE_MEMORY_LIMIT=\"lots\": must be", 0), 0u)
        << e.what();
  }
}

// A pipeline of 4 ranks with 4,096 microbatches: about 115 k actions, some 9 MiB to simulate.
nlohmann::json long_pipeline() {
  return nlohmann::json::parse(
      R"({"model": {"kind": "mlp", "layers": 8, "hidden": 64},
          "mesh": {"dp": 1, "tp": 1, "pp": 4}, "batch": {"global": 4096, "micro": 1},
          "schedule": "1f1b", "cluster": {"gpu": "a100-80gb"}})");
}

TEST(PredictMemoryBudget, AConfigBeyondTheLimitIsRefusedNamingWhatSetIt) {
  EXPECT_EQ(error_of(long_pipeline()), "");
  ScopedEnv limit("MESHSCOPE_MEMORY_LIMIT", "4M");
  const std::string e = error_of(long_pipeline());
  EXPECT_EQ(e.rfind("cfg.json: key 'batch.global': 4096 microbatches per replica", 0), 0u) << e;
  EXPECT_NE(e.find("of memory, over half of what this process may use (MESHSCOPE_MEMORY_LIMIT "
                   "allows 4.0 MiB)"),
            std::string::npos)
      << e;
}

// Layers are refused at the most that building them was measured to take (footprint.cpp), not at
// the size of their op records, a third to a fifth of it: 20,000 tiny GPT layers are estimated at
// 352 MiB (they took 98 to 240 MiB, by the options), 40,000 moe blocks at 391 MiB (they took
// about 320), both more than half of a 512 MiB limit; by their records alone (54 and 13 MiB) both
// were accepted.
TEST(PredictMemoryBudget, LayersAreRefusedAtWhatBuildingThemTakes) {
  nlohmann::json gpt = nlohmann::json::parse(
      R"({"model": {"kind": "gpt", "layers": 20000, "hidden": 64, "heads": 4, "seq": 128,
                    "vocab": 512},
          "mesh": {"dp": 1, "tp": 1, "pp": 4}, "batch": {"global": 8, "micro": 1},
          "schedule": "1f1b", "cluster": {"gpu": "a100-80gb"}})");
  nlohmann::json moe = nlohmann::json::parse(
      R"({"model": {"kind": "moe", "layers": 40000, "hidden": 8, "experts": 2, "top_k": 1},
          "mesh": {"dp": 1, "pp": 1}, "batch": {"global": 2, "micro": 1},
          "cluster": {"gpu": "a100-80gb"}})");
  ScopedEnv limit("MESHSCOPE_MEMORY_LIMIT", "512M");
  std::string e = error_of(gpt);
  EXPECT_EQ(e.rfind("cfg.json: key 'model.layers': building 20000 layers would take about ", 0), 0u)
      << e;
  EXPECT_NE(e.find("of memory, over half of what this process may use (MESHSCOPE_MEMORY_LIMIT "
                   "allows 512.0 MiB)"),
            std::string::npos)
      << e;
  e = error_of(moe);
  EXPECT_EQ(e.rfind("cfg.json: key 'model.layers': building 40000 layers would take about ", 0), 0u)
      << e;
  // A tenth of them is accepted.
  gpt["model"]["layers"] = 2000;
  moe["model"]["layers"] = 4000;
  EXPECT_EQ(error_of(gpt), "");
  EXPECT_EQ(error_of(moe), "");
}

}  // namespace
}  // namespace meshscope::predict
