// Which family a schedule is (schedule::family_running): torch's own orders of every family
// (tests/fixtures/torch_orders, made by torch 2.15 itself) are recognised as the family their
// file names, and a schedule of none is recognised as none.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "sim/schedule/generators.h"
#include "sim/schedule/schedule_file.h"
#include "sim/schedule/schedule_text.h"

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

// A dump read back keeps its family's name; edited by hand (rank 1's W actions moved to its end),
// it is no longer that family's and is read as "<name>-edited", so the run is not described,
// calibrated or rebuilt as the family. Byte counts are a workload's, so they may differ.
TEST(FamilyRunning, AScheduleFileNamedForAFamilyIsThatFamilysOnlyWhenItsActionsAre) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("meshscope_is_generated_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (const Family f : {Family::kNaive, Family::kZbH1, Family::kInterleaved, Family::kDualPipeV,
                         Family::kDataParallel}) {
    SCOPED_TRACE(std::string(name(f)));
    GeneratorConfig g;
    g.family = f;
    g.mesh = f == Family::kDataParallel ? mesh::MeshShape{.dp = 4, .pp = 1, .tp = 1}
                                        : mesh::MeshShape{.dp = 2, .pp = 2, .tp = 2};
    g.microbatches = 4;
    g.virtual_stages = info(f).default_virtual_stages;
    g.activation_bytes = {4096};
    Schedule s = generate(g);
    EXPECT_TRUE(is_generated(s));
    const std::string path = (dir / "s.sched").string();
    save_file(s, path);
    EXPECT_EQ(load_schedule_file(path).schedule.name, name(f));
    if (f == Family::kDataParallel) continue;
    auto& acts = s.ranks[1];
    std::stable_partition(acts.begin(), acts.end(), [](const Action& a) {
      return a.kind != ActionKind::kWeightGrad && a.kind != ActionKind::kOptimizerStep;
    });
    if (f == Family::kZbH1) {
      save_file(s, path);
      EXPECT_EQ(load_schedule_file(path).schedule.name, "zb-h1-edited");
    }
    s.name = "gpipe";  // another family's name on it
    EXPECT_FALSE(is_generated(s));
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace meshscope::schedule
