// torch pipelining jobs of several pipeline replicas (dp 2; tests/fixtures/torch/dp2_*): each
// replica read as its own pipeline, whichever order the ranks' process groups are listed in, and
// the gradient all-reduces between replicas read as the communication they are.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "traces/analysis.h"
#include "traces/analysis_stragglers.h"
#include "traces/import/load_trace.h"
#include "traces/import/torch_pipeline.h"

namespace meshscope::traces {
namespace {

const std::filesystem::path kFixtures =
    std::filesystem::path(MESHSCOPE_SOURCE_DIR) / "tests" / "fixtures" / "torch";

struct Job {
  const char* folder;
  int pp;
};

Timeline load_job(const char* folder, ImportReport* report = nullptr) {
  const std::vector<std::filesystem::path> paths = {kFixtures / folder};
  return load_traces(paths, ImportOptions{}, report);
}

// GPipe and 1F1B name no stage in their actions: each rank's file can only say stage = rank.
// In these jobs the dp groups are listed before the pp groups (--dp-groups-first), so a dp
// group's ranks (0 and 2) had read as one pipeline of stages 0 and 2. Each rank now runs the
// stage of its place in its replica: its forward actions receive no input on the first, send no
// output on the last (rank 1 of dp2_1F1B sits between).
class SingleStageReplicas : public ::testing::TestWithParam<Job> {};

TEST_P(SingleStageReplicas, EachRankRunsTheStageOfItsPlaceInItsReplica) {
  const Job job = GetParam();
  const Timeline t = load_job(job.folder);
  std::vector<std::vector<int>> replicas(2);
  for (int r = 0; r < 2 * job.pp; ++r) replicas[static_cast<size_t>(r / job.pp)].push_back(r);
  EXPECT_EQ(importer::torch_pipeline_groups(t), replicas);
  EXPECT_TRUE(importer::torch_untraced_ranks(t).empty());

  std::map<int, std::set<int>> compute_stages;  // rank -> stages of its compute spans
  for (const Span& s : t.spans) {
    if (s.kind == SpanKind::kCompute && s.stage >= 0)
      compute_stages[t.devices[s.device].rank].insert(s.stage);
  }
  ASSERT_EQ(compute_stages.size(), static_cast<size_t>(2 * job.pp));
  for (const auto& [rank, stages] : compute_stages) {
    EXPECT_EQ(stages, std::set<int>{rank % job.pp}) << "rank " << rank;
  }
  for (const Device& d : t.devices) {
    if (d.lanes.empty() || d.lanes[0].kind == LaneKind::kHost) continue;
    EXPECT_EQ(d.coord.dp, d.rank / job.pp) << d.name;
    EXPECT_EQ(d.coord.pp, d.rank % job.pp) << d.name;
  }
  // Both replicas ran one schedule: rank r's actions are rank r - pp's, stage numbers included.
  const auto orders = importer::torch_action_orders(t);
  for (int r = job.pp; r < 2 * job.pp; ++r) {
    ASSERT_TRUE(orders.count(r)) << r;
    EXPECT_EQ(orders.at(r), orders.at(r - job.pp)) << "rank " << r;
  }
  EXPECT_EQ(orders.at(0).front(), "0F0");
  std::string owners;
  for (int s = 0; s < job.pp; ++s) owners += (s ? " " : "") + std::to_string(s);
  EXPECT_EQ(t.metadata.at("pipeline_stage_owner"), owners);
  // Every activation and gradient stays inside its replica.
  int flows = 0;
  for (const Flow& f : t.flows) {
    const int a = t.devices[t.spans[f.from].device].rank;
    const int b = t.devices[t.spans[f.to].device].rank;
    EXPECT_EQ(a / job.pp, b / job.pp) << "flow from rank " << a << " to rank " << b;
    ++flows;
  }
  EXPECT_GT(flows, 0);
}

INSTANTIATE_TEST_SUITE_P(Torch215, SingleStageReplicas,
                         ::testing::Values(Job{"dp2_GPipe", 2}, Job{"dp2_1F1B", 3}));

// Without the middle ranks' files (1 and 4: a whole dp group), each replica's missing rank is
// named. When a rank's stage was its global rank, the dp groups {0, 3} and {2, 5} (stages 0 and 3,
// 2 and 5: none twice) read as the traced ranks' pipelines, and nothing was missing.
TEST(SingleStageReplicas, TheMissingRanksOfReplicasAreNamed) {
  std::vector<std::filesystem::path> files;
  for (int r : {0, 2, 3, 5})
    files.push_back(kFixtures / "dp2_1F1B" / ("rank" + std::to_string(r) + ".json.gz"));
  const Timeline t = load_traces(files);
  EXPECT_EQ(importer::torch_untraced_ranks(t), (std::vector<int>{1, 4}));
}

// The gradient all-reduce each rank runs with its place in the other replica (gloo:all_reduce, on
// gloo's threads) is its communication, not idle cool-down; the stragglers pair each with the
// same place's rank of the other replica. The ranks share one clock, and their gloo collectives,
// which name no group, do not shift it.
class GlooCollectives : public ::testing::TestWithParam<Job> {};

TEST_P(GlooCollectives, AreTheCommunicationOfACpuRankWithItsDataParallelPeer) {
  const Job job = GetParam();
  ImportReport report;
  const Timeline t = load_job(job.folder, &report);
  int all_reduces = 0;
  for (uint32_t i = 0; i < t.spans.size(); ++i) {
    if (t.span_name(t.spans[i]) != "gloo:all_reduce") continue;
    ++all_reduces;
    EXPECT_EQ(t.spans[i].kind, SpanKind::kCollective);
    const Collective* c = t.collective_of(i);
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->op, CollectiveOp::kAllReduce);
    EXPECT_EQ(c->group, GroupKind::kDp);
  }
  EXPECT_GT(all_reduces, 0);
  const TimelineAnalysis a = analyze(t);
  ASSERT_EQ(a.devices.size(), static_cast<size_t>(2 * job.pp));
  for (const DeviceAnalysis& d : a.devices) EXPECT_GT(d.communication_ns, 0) << d.name;

  const StragglerAnalysis s = stragglers(t);
  EXPECT_TRUE(s.unpaired.empty());
  EXPECT_EQ(2 * s.instances.size(), static_cast<size_t>(all_reduces));
  for (const CollectiveInstance& c : s.instances) {
    ASSERT_EQ(c.spans.size(), 2u) << c.name << " #" << c.occurrence;
    const int a0 = t.devices[t.spans[c.spans[0]].device].rank;
    const int a1 = t.devices[t.spans[c.spans[1]].device].rank;
    EXPECT_EQ(a1, a0 + job.pp) << c.name << " #" << c.occurrence;
  }
  for (const RankClock& clock : report.clocks) {
    EXPECT_EQ(clock.offset_ns, 0) << clock.file;
    EXPECT_EQ(clock.matched_collectives, 0) << clock.file;
  }
}

INSTANTIATE_TEST_SUITE_P(Torch215, GlooCollectives,
                         ::testing::Values(Job{"dp2_GPipe", 2}, Job{"dp2_1F1B", 3},
                                           Job{"dp2_Interleaved1F1B", 2}));

}  // namespace
}  // namespace meshscope::traces
