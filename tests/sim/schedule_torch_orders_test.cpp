// meshscope's generators against torch.distributed.pipelining 2.15: for every family torch has and
// every shape in tests/fixtures/torch_orders (written by torch itself, see its README), each pp
// rank runs exactly torch's compute actions in torch's order, with torch's stage placement.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "sim/schedule/generators.h"
#include "sim/schedule/torch_csv.h"
#include "sim/schedule/validator.h"
#include "tests/sim/torch_orders_fixture.h"

namespace meshscope::schedule {
namespace {

namespace fs = std::filesystem;

const fs::path& kDir = testing::kTorchOrdersDir;
using testing::read;

// Per rank, the compute cells of a compute_only CSV (torch's idle cells dropped: its runtime
// skips them; meshscope's order has none).
std::vector<std::vector<std::string>> compute_rows(const Schedule& s) {
  const std::string csv = write_torch_csv(s, TorchCsvFormat::kComputeOnly);
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(csv);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::vector<std::string> row;
    std::istringstream cells(line);
    std::string cell;
    while (std::getline(cells, cell, ',')) {
      if (!cell.empty() && cell != "\"\"") row.push_back(cell);
    }
    rows.push_back(row);
  }
  return rows;
}

struct Shape {
  std::string file;
  Family family;
  int pp, m, v;
};

std::vector<Shape> torch_shapes() {
  const std::regex name(
      R"(([a-z0-9-]+)_pp(\d+)_m(\d+)_v(\d+)\.(compute_only|pipeline_order)\.csv)");
  std::vector<Shape> out;
  for (const auto& e : fs::directory_iterator(kDir)) {
    std::smatch m;
    const std::string file = e.path().filename().string();
    if (!std::regex_match(file, m, name)) continue;
    const std::optional<Family> f = parse_family(m[1].str());
    EXPECT_TRUE(f.has_value()) << file;
    if (f) out.push_back({file, *f, std::stoi(m[2]), std::stoi(m[3]), std::stoi(m[4])});
  }
  std::sort(out.begin(), out.end(), [](const Shape& a, const Shape& b) { return a.file < b.file; });
  return out;
}

Schedule generated(const Shape& s) {
  GeneratorConfig c;
  c.family = s.family;
  c.mesh = {.dp = 1, .pp = s.pp, .tp = 1};
  c.microbatches = s.m;
  c.virtual_stages = s.v;
  return generate(c);
}

// torch 2.15's Schedule1F1B._get_pipeline_order (the IR it dumps, not what it runs) numbers the
// last rank's forwards from 1 ("3F1 3B0 3F2 ... 3F8" for 8 microbatches: microbatch 8 does not
// exist), because it increments the forward counter before the first forward when that rank has
// no warm-up. Its runtime, Schedule1F1B._step_microbatches, runs F0 B0 F1 B1 ... there, which is
// meshscope's order; this maps the IR's row to that.
std::vector<std::string> torch_1f1b_last_rank_as_run(std::vector<std::string> row) {
  for (std::string& cell : row) {
    const size_t f = cell.find('F');
    if (f != std::string::npos)
      cell = cell.substr(0, f + 1) + std::to_string(std::stoi(cell.substr(f + 1)) - 1);
  }
  return row;
}

TEST(TorchOrders, Torch1f1bIrNumbersItsLastRankFromOne) {
  const std::string text = read(kDir / "1f1b_pp4_m8_v1.pipeline_order.csv");
  EXPECT_NE(text.find("\r\n3F1,3B0,3F2,3B1,"), std::string::npos);
  EXPECT_NE(text.find(",3F8,3B7,"), std::string::npos);
}

TEST(TorchOrders, EveryFamilyTorchHasRunsTorchsOrderPerRank) {
  const std::vector<Shape> shapes = torch_shapes();
  ASSERT_GE(shapes.size(), 24u);
  int compared = 0;
  for (const Shape& shape : shapes) {
    SCOPED_TRACE(shape.file);
    const Schedule torch = parse_torch_csv(read(kDir / shape.file), shape.file).schedule;
    const Schedule ours = generated(shape);
    EXPECT_EQ(ours.stage_owner, torch.stage_owner);
    std::vector<std::vector<std::string>> want = compute_rows(torch);
    if (shape.family == Family::kOneFOneB) want.back() = torch_1f1b_last_rank_as_run(want.back());
    EXPECT_EQ(compute_rows(ours), want);
    EXPECT_EQ(info(shape.family).torch_class.empty(), false);
    ++compared;
  }
  EXPECT_EQ(compared, static_cast<int>(shapes.size()));
}

// meshscope's zb-h1 (Qi et al. 2023) is torch's ScheduleInterleavedZeroBubble with one stage per
// rank, order for order.
TEST(TorchOrders, ZbH1IsTorchsInterleavedZeroBubbleWithOneChunk) {
  for (const Shape& s :
       {Shape{"interleaved-zb_pp4_m8_v1.compute_only.csv", Family::kZbH1, 4, 8, 1},
        Shape{"interleaved-zb_pp3_m6_v1.compute_only.csv", Family::kZbH1, 3, 6, 1}}) {
    SCOPED_TRACE(s.file);
    const Schedule torch = parse_torch_csv(read(kDir / s.file), s.file).schedule;
    EXPECT_EQ(compute_rows(generated(s)), compute_rows(torch));
  }
}

// Interleaved 1F1B takes the microbatch counts torch runs, in torch's rounds (4 ranks with 3, 5,
// 6 or 10 microbatches: the fixtures above, each torch's order). Before, it kept Megatron-LM's
// rule (pp divides m) and refused those, so a torch job of such a shape had no interleaved
// alternative. A count torch refuses is refused with torch's rule.
TEST(TorchOrders, InterleavedTakesTheMicrobatchCountsTorchRuns) {
  for (const int m : {3, 5, 6, 10}) {
    const std::string file = "interleaved_pp4_m" + std::to_string(m) + "_v2.compute_only.csv";
    EXPECT_TRUE(fs::exists(kDir / file)) << file;
  }
  try {
    generated(Shape{"", Family::kInterleaved, 3, 7, 2});
    FAIL() << "interleaved with 7 microbatches on 3 ranks was generated";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("needs microbatches divisible by max(1, microbatches / "
                                         "pp) = 2 (as torch), got 7 microbatches"),
              std::string::npos)
        << e.what();
  }
}

TEST(TorchOrders, NewFamiliesValidateOnLargerMeshes) {
  for (const Family f :
       {Family::kZbV, Family::kDualPipeV, Family::kInterleavedZeroBubble, Family::kLoopedBfs}) {
    for (const mesh::MeshShape mesh :
         {mesh::MeshShape{1, 2, 1}, mesh::MeshShape{2, 4, 2}, mesh::MeshShape{1, 8, 1}}) {
      GeneratorConfig c;
      c.family = f;
      c.mesh = mesh;
      c.microbatches = 2 * mesh.pp;
      c.virtual_stages = info(f).default_virtual_stages;
      c.activation_bytes = {4096};
      c.gradient_bytes = {1 << 20};
      const Schedule s = generate(c);
      const ValidationResult r = validate(s);
      EXPECT_TRUE(r.ok()) << name(f) << " " << to_string(mesh) << ": " << r.report(s);
    }
  }
}

TEST(TorchOrders, FamilyRulesComeFromTheDescriptor) {
  const mesh::MeshShape pp4{1, 4, 1};
  EXPECT_NE(family_rule_violation(Family::kZbV, pp4, 3, 8).find("takes 2 stages per pp rank"),
            std::string::npos);
  EXPECT_NE(family_rule_violation(Family::kDualPipeV, pp4, 2, 7).find("at least as many"),
            std::string::npos);
  EXPECT_TRUE(family_rule_violation(Family::kDualPipeV, pp4, 2, 8).empty());
  EXPECT_NE(family_rule_violation(Family::kInterleavedZeroBubble, pp4, 2, 9)
                .find("divisible by max(1, microbatches / pp) = 2"),
            std::string::npos);
  EXPECT_TRUE(family_rule_violation(Family::kInterleavedZeroBubble, pp4, 2, 6).empty());
  EXPECT_EQ(stage_placement(Placement::kV, 3, 6), (std::vector<int>{0, 1, 2, 2, 1, 0}));
  EXPECT_EQ(stage_placement(Placement::kV, 2, 6), (std::vector<int>{0, 1, 1, 0, 0, 1}));
  EXPECT_EQ(stage_placement(Placement::kLoop, 2, 6), (std::vector<int>{0, 1, 0, 1, 0, 1}));
}

}  // namespace
}  // namespace meshscope::schedule
