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
  EXPECT_NE(e.find("of memory; MESHSCOPE_MEMORY_LIMIT allows 4.0 MiB"), std::string::npos) << e;
}

}  // namespace
}  // namespace meshscope::predict
