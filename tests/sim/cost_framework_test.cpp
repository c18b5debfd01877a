// Framework profiles (sim/cost/frameworks/*.json): every shipped profile loads, states its
// sources, and bad profiles are refused with the key named.
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "sim/cost/framework.h"
#include "sim/cost/hardware.h"

namespace meshscope::cost {
namespace {

std::string error_of(const nlohmann::json& j) {
  try {
    parse_framework(j, "fw.json");
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(CostFramework, EveryShippedProfileLoadsAndCitesItsSources) {
  const auto names = list_frameworks();
  ASSERT_GE(names.size(), 5u);
  for (const std::string& n : names) {
    const Framework f = find_framework(n);
    EXPECT_EQ(f.name, n);
    EXPECT_FALSE(f.sources.empty()) << n;
  }
  EXPECT_NE(std::find(names.begin(), names.end(), std::string(kDefaultFramework)), names.end());
}

TEST(CostFramework, BadProfilesNameTheKey) {
  EXPECT_NE(
      error_of({{"name", "x"}, {"grad_reduce", "sometimes"}}).find("fw.json: key 'grad_reduce'"),
      std::string::npos);
  EXPECT_NE(error_of({{"name", "x"}, {"flash_attention", "unfused"}}).find("key 'flash_attention'"),
            std::string::npos);
  EXPECT_NE(error_of({{"name", "x"}, {"fused", true}}).find("key 'fused': unknown key"),
            std::string::npos);
  EXPECT_NE(error_of({{"name", "x"}, {"elementwise_passes", {{"norm", -1}}}})
                .find("elementwise_passes.norm"),
            std::string::npos);
  EXPECT_NE(error_of({{"name", "x"},
                      {"residuals", {{"a100-80gb", {{"low", 0.2}, {"high", 0.1}, {"rows", 2}}}}}})
                .find("residuals.a100-80gb"),
            std::string::npos);
  EXPECT_NE(error_of(nlohmann::json::object()).find("key 'name'"), std::string::npos);
  try {
    find_framework("no-such-framework");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown framework 'no-such-framework'"),
              std::string::npos)
        << e.what();
  }
}

TEST(CostFramework, FlashAttention3FallsBackToFlashAttention2WithoutHopper) {
  const Hardware a100 = find_hardware("a100-80gb"), h100 = find_hardware("h100-sxm");
  EXPECT_DOUBLE_EQ(attention_efficiency(a100, AttentionKernel::kFlash3),
                   a100.efficiency.attention_flash2);
  EXPECT_DOUBLE_EQ(attention_efficiency(h100, AttentionKernel::kFlash3),
                   h100.efficiency.attention_flash3);
  EXPECT_LT(attention_efficiency(h100, AttentionKernel::kFlash2),
            attention_efficiency(h100, AttentionKernel::kFlash3));
}

}  // namespace
}  // namespace meshscope::cost
