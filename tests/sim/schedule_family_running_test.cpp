// Which family a schedule is (schedule::family_running): torch's own orders of every family
// (tests/fixtures/torch_orders, made by torch 2.15 itself) are recognised as the family their
// file names, and a schedule of none is recognised as none.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "sim/schedule/generators.h"
#include "sim/schedule/schedule_file.h"

namespace meshscope::schedule {
namespace {

namespace fs = std::filesystem;
const fs::path kOrders = fs::path(MESHSCOPE_SOURCE_DIR) / "tests/fixtures/torch_orders";

TEST(FamilyRunning, TorchsOrdersAreTheFamiliesTheyAreOf) {
  int recognised = 0;
  for (const auto& entry : fs::directory_iterator(kOrders)) {
    const std::string file = entry.path().filename().string();
    if (entry.path().extension() != ".csv") continue;
    SCOPED_TRACE(file);
    const std::string family = file.substr(0, file.find("_pp"));
    const Schedule s = load_schedule_file(entry.path().string()).schedule;
    const std::optional<Family> f = family_running(s);
    if (family == "1f1b") {
      // torch's pipeline_order numbers the last rank's forwards from 1: not what any family runs.
      EXPECT_FALSE(f) << name(*f);
      continue;
    }
    ASSERT_TRUE(f);
    // Interleaved zero bubble with one stage per rank runs ZB-H1's order, the earlier family.
    const bool one_chunk = file.find("_v1.") != std::string::npos;
    EXPECT_EQ(name(*f), family == "interleaved-zb" && one_chunk ? "zb-h1" : family);
    ++recognised;
  }
  EXPECT_EQ(recognised, 51);
}

TEST(FamilyRunning, EachGeneratedPipelineIsItsOwnFamilyAndAnEditedOneNone) {
  for (const Family f : {Family::kGpipe, Family::kOneFOneB, Family::kInterleaved, Family::kZbH1,
                         Family::kZbV, Family::kLoopedBfs}) {
    SCOPED_TRACE(std::string(name(f)));
    GeneratorConfig g;
    g.family = f;
    g.mesh = {.dp = 2, .pp = 4, .tp = 2};
    g.microbatches = 8;
    g.virtual_stages = info(f).default_virtual_stages;
    Schedule s = generate(g);
    ASSERT_EQ(family_running(s), f);
    // Rank 1's first two compute actions swapped: no family runs that.
    auto& acts = s.ranks[static_cast<size_t>(mesh::Mesh(g.mesh).rank_of({0, 1, 0}))];
    size_t first = acts.size(), second = acts.size();
    for (size_t i = 0; i < acts.size(); ++i) {
      if (!is_compute(acts[i].kind)) continue;
      if (first == acts.size()) {
        first = i;
      } else if (acts[i].microbatch != acts[first].microbatch || acts[i].kind != acts[first].kind) {
        second = i;
        break;
      }
    }
    ASSERT_LT(second, acts.size());
    std::swap(acts[first], acts[second]);
    EXPECT_FALSE(family_running(s));
  }
}

}  // namespace
}  // namespace meshscope::schedule
