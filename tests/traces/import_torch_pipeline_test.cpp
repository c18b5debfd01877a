// torch.distributed.pipelining traces: the action-name grammar, and the traces of real torch 2.15
// jobs (tests/fixtures/torch, made by scripts/make-torch-fixtures.sh) read as pipelines — every
// rank a device, each rank's action order equal to torch's own CSV of the schedule, the stage
// placement torch used, and every cross-rank send paired with its recv.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "tests/traces/import_test_util.h"
#include "traces/chrome_export.h"
#include "traces/import/load_trace.h"
#include "traces/import/torch_actions.h"
#include "traces/import/torch_pipeline.h"

namespace meshscope::traces {
namespace {

using importer::parse_torch_range;
using importer::TorchActionType;

TEST(TorchActionGrammar, ParsesTheRangesTorchWrites) {
  const auto f = parse_torch_range("PP:1F0");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->type, TorchActionType::kForward);
  EXPECT_EQ(f->stage, 1);
  EXPECT_EQ(f->microbatch, 0);
  EXPECT_EQ(f->text, "1F0");

  const auto i = parse_torch_range("PP:6I3");
  ASSERT_TRUE(i);
  EXPECT_EQ(i->type, TorchActionType::kInputGrad);
  EXPECT_EQ(i->stage, 6);
  EXPECT_EQ(i->microbatch, 3);

  const auto send = parse_torch_range("PP:12SEND_F10");
  ASSERT_TRUE(send);
  EXPECT_EQ(send->type, TorchActionType::kSendForward);
  EXPECT_EQ(send->stage, 12);
  EXPECT_EQ(send->microbatch, 10);

  EXPECT_EQ(parse_torch_range("PP:1RECV_B2")->type, TorchActionType::kRecvBackward);
  EXPECT_EQ(parse_torch_range("PP:3WAIT_SEND_F0")->type, TorchActionType::kWaitSendForward);
  const auto unshard = parse_torch_range("PP:0UNSHARD");
  ASSERT_TRUE(unshard);
  EXPECT_EQ(unshard->type, TorchActionType::kUnshard);
  EXPECT_EQ(unshard->microbatch, -1);
  EXPECT_EQ(parse_torch_range("PP:0REDUCE_GRAD")->type, TorchActionType::kReduceGrad);
  EXPECT_EQ(parse_torch_range("PP:7WAIT_REDUCE_GRAD")->type, TorchActionType::kWaitReduceGrad);

  const auto overlap = parse_torch_range("PP:(0F7;7B3)OVERLAP_F_B");
  ASSERT_TRUE(overlap);
  EXPECT_EQ(overlap->type, TorchActionType::kOverlapFB);
  ASSERT_EQ(overlap->part_count, 2);
  EXPECT_EQ(overlap->parts[0].type, TorchActionType::kForward);
  EXPECT_EQ(overlap->parts[0].stage, 0);
  EXPECT_EQ(overlap->parts[0].microbatch, 7);
  EXPECT_EQ(overlap->parts[1].type, TorchActionType::kBackward);
  EXPECT_EQ(overlap->parts[1].stage, 7);
  EXPECT_EQ(overlap->parts[1].microbatch, 3);
  EXPECT_EQ(overlap->text, "(0F7;7B3)OVERLAP_F_B");

  const auto gpipe = parse_torch_range("Backward 5");
  ASSERT_TRUE(gpipe);
  EXPECT_EQ(gpipe->type, TorchActionType::kBackward);
  EXPECT_EQ(gpipe->stage, -1);
  EXPECT_EQ(gpipe->microbatch, 5);
  EXPECT_EQ(parse_torch_range("Forward 0")->type, TorchActionType::kForward);
}

TEST(TorchActionGrammar, RejectsOtherNames) {
  for (const char* name : {"PP:", "PP:F0", "PP:1Q0", "PP:1F0x", "PP:(0F7;7B3)", "PP:()OVERLAP_F_B",
                           "PP:(0F7;7SEND_F3)OVERLAP_F_B", "PP:40000F0", "Forward", "Forward x",
                           "aten::mm", "ProfilerStep#3", "gloo:recv"}) {
    EXPECT_FALSE(parse_torch_range(name)) << name;
  }
}

const std::filesystem::path kFixtures =
    std::filesystem::path(MESHSCOPE_SOURCE_DIR) / "tests" / "fixtures" / "torch";

std::vector<std::vector<std::string>> read_csv(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::vector<std::vector<std::string>> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) cells.push_back(cell);
    if (!line.empty() && line.back() == ',') cells.emplace_back();
    rows.push_back(cells);
  }
  return rows;
}

std::vector<std::string> non_empty(const std::vector<std::string>& cells) {
  std::vector<std::string> out;
  for (const auto& c : cells) {
    if (!c.empty()) out.push_back(c);
  }
  return out;
}

bool is_compute_token(const std::string& text) {
  const auto a = parse_torch_range("PP:" + text);
  return a && importer::is_compute(a->type);
}

class TorchFixture : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    dir_ = kFixtures / GetParam();
    if (!std::filesystem::exists(dir_ / "job.meta")) GTEST_SKIP() << "no fixture " << dir_;
    job_ = nlohmann::json::parse(std::ifstream(dir_ / "job.meta"));
    const std::vector<std::filesystem::path> paths = {dir_};
    timeline_ = load_traces(paths);
    only_ = read_csv(dir_ / "schedule.compute_only.csv");
    if (std::filesystem::exists(dir_ / "schedule.compute_comms.csv")) {
      comms_ = read_csv(dir_ / "schedule.compute_comms.csv");
    }
  }
  std::filesystem::path dir_;
  nlohmann::json job_;
  Timeline timeline_;
  std::vector<std::vector<std::string>> only_, comms_;
};

TEST_P(TorchFixture, EveryRankIsADeviceWithCompute) {
  const int pp = job_["pp"];
  ASSERT_EQ(static_cast<int>(trace_files_in(dir_).size()), pp);
  ASSERT_EQ(static_cast<int>(only_.size()), pp);
  std::set<int> ranks;
  for (size_t d = 0; d < timeline_.devices.size(); ++d) {
    const Device& dev = timeline_.devices[d];
    bool compute_lane = false;
    for (const Lane& l : dev.lanes) compute_lane = compute_lane || l.kind == LaneKind::kCompute;
    if (!compute_lane) continue;
    EXPECT_EQ(dev.name, "rank " + std::to_string(dev.rank) + " \u00b7 CPU");
    EXPECT_EQ(dev.coord, (MeshCoord{0, dev.rank, 0}));
    ranks.insert(dev.rank);
    int64_t compute = 0;
    for (const Span& s : timeline_.spans) {
      if (s.device == d && s.kind == SpanKind::kCompute) compute += s.duration_ns();
    }
    EXPECT_GT(compute, 0) << dev.name;
  }
  EXPECT_EQ(static_cast<int>(ranks.size()), pp);
}

// The type of each compute action in order ("F", "B", "I", "W", "OVERLAP_F_B").
std::vector<std::string> compute_types(const std::vector<std::string>& actions) {
  std::vector<std::string> out;
  for (const auto& a : actions) {
    const auto parsed = parse_torch_range("PP:" + a);
    if (parsed && importer::is_compute(parsed->type)) out.emplace_back(token(parsed->type));
  }
  return out;
}

TEST_P(TorchFixture, ActionOrderIsTorchsSchedule) {
  const auto orders = importer::torch_action_orders(timeline_);
  ASSERT_EQ(orders.size(), only_.size());
  const int microbatches = job_["microbatches"];
  for (const auto& [rank, order] : orders) {
    ASSERT_LT(static_cast<size_t>(rank), only_.size());
    const auto row = non_empty(only_[static_cast<size_t>(rank)]);
    // The kinds of compute in torch's order, always.
    EXPECT_EQ(compute_types(order), compute_types(row)) << "rank " << rank;
    if (!comms_.empty()) {
      // With comm lowering torch runs exactly its compute_comms row, one PP: range per action,
      // and its compute_only row is that row's compute actions.
      EXPECT_EQ(order, non_empty(comms_[static_cast<size_t>(rank)])) << "rank " << rank;
      std::vector<std::string> compute, expected;
      for (const auto& a : order) {
        if (is_compute_token(a)) compute.push_back(a);
      }
      for (const auto& a : row) {
        if (is_compute_token(a)) expected.push_back(a);
      }
      EXPECT_EQ(compute, expected) << "rank " << rank;
    } else {
      // GPipe, 1F1B: one stage per rank, each microbatch's F and B once, in microbatch order
      // (their runtime loops i = 0..n-1; 1F1B's pipeline_order numbers the last rank's forwards
      // from 1, a torch 2.15 quirk the runtime does not share).
      std::vector<std::string> forwards, backwards, expected_f, expected_b;
      for (const auto& a : order) {
        if (a.find('F') != std::string::npos) forwards.push_back(a);
        if (a.find('B') != std::string::npos) backwards.push_back(a);
      }
      for (int m = 0; m < microbatches; ++m) {
        expected_f.push_back(std::to_string(rank) + "F" + std::to_string(m));
        expected_b.push_back(std::to_string(rank) + "B" + std::to_string(m));
      }
      EXPECT_EQ(forwards, expected_f) << "rank " << rank;
      EXPECT_EQ(backwards, expected_b) << "rank " << rank;
    }
  }
}

TEST_P(TorchFixture, StagePlacementIsTorchs) {
  const auto& placement = job_["stage_to_rank"];
  std::string expected;
  for (int s = 0; s < static_cast<int>(job_["num_stages"]); ++s) {
    const int rank = placement[std::to_string(s)];
    expected += (expected.empty() ? "" : " ") + std::to_string(rank);
  }
  EXPECT_EQ(timeline_.metadata.at("pipeline_stage_owner"), expected);
}

TEST_P(TorchFixture, RunDescriptorHasTheJobsShape) {
  const RunDescriptor& run = timeline_.run;
  EXPECT_EQ(run.source, RunSource::kKineto);
  EXPECT_EQ(run.mesh.pp, static_cast<int>(job_["pp"]));
  EXPECT_EQ(run.stages, static_cast<int>(job_["num_stages"]));
  EXPECT_EQ(run.virtual_stages, static_cast<int>(job_["stages_per_rank"]));
  EXPECT_EQ(run.microbatches, static_cast<int>(job_["microbatches"]));
  EXPECT_EQ(run.mesh.dp, 0);  // process groups are not read: not known
}

TEST_P(TorchFixture, ComputeSpansLieInTheirActions) {
  // Each compute span is inside an action range of its device with its stage, microbatch and
  // phase.
  std::vector<const Span*> actions;
  for (const Span& s : timeline_.spans) {
    // torch's own ranges, or the ones inferred for Schedule1F1B ("1F0 (inferred)").
    if (s.kind == SpanKind::kAnnotation && s.stage >= 0 &&
        (parse_torch_range(timeline_.span_name(s)) ||
         timeline_.span_name(s).ends_with(" (inferred)"))) {
      actions.push_back(&s);
    }
  }
  size_t checked = 0;
  for (const Span& s : timeline_.spans) {
    if (s.kind != SpanKind::kCompute) continue;
    ASSERT_GE(s.stage, 0);
    ASSERT_NE(s.phase, Phase::kNone);
    bool inside = false;
    for (const Span* a : actions) {
      if (a->device == s.device && a->begin_ns <= s.begin_ns && s.end_ns <= a->end_ns) {
        const auto parsed = parse_torch_range(timeline_.span_name(*a));
        inside = (parsed && parsed->type == TorchActionType::kOverlapFB) ||
                 (a->stage == s.stage && a->microbatch == s.microbatch && a->phase == s.phase);
        break;
      }
    }
    EXPECT_TRUE(inside) << timeline_.span_name(s) << " at " << s.begin_ns;
    ++checked;
  }
  EXPECT_GT(checked, 0u);
}

TEST_P(TorchFixture, SendsArePairedWithTheirRecvs) {
  // One c10d::send per SEND action to another rank (one activation tensor per microbatch).
  size_t expected = 0;
  if (!comms_.empty()) {
    for (const auto& row : comms_) {
      for (const auto& a : row) {
        if (a.find("SEND_F") != std::string::npos || a.find("SEND_B") != std::string::npos) {
          if (a.find("WAIT_") == std::string::npos) ++expected;
        }
      }
    }
  } else {
    // GPipe / 1F1B: every stage but the last sends each microbatch's activation forward, every
    // stage but the first each gradient back.
    expected =
        2 * static_cast<size_t>(job_["microbatches"]) * (static_cast<size_t>(job_["pp"]) - 1);
  }
  // Each send op is paired with the gloo:recv range that covers the receive (gloo's own send
  // range opens as the send op returns, after some of those receives had ended: the op stands for
  // the send's begin), and not with the op that posted the receive: posted ahead, it returned
  // before many sends began, and a flow to it would run back in time (Perfetto drops those).
  size_t paired = 0, covered = 0;
  for (const Flow& f : timeline_.flows) {
    const Span& from = timeline_.spans[f.from];
    const Span& to = timeline_.spans[f.to];
    EXPECT_NE(timeline_.span_name(from), "gloo:send");
    if (timeline_.span_name(from) != "c10d::send") continue;
    const std::string_view recv = timeline_.span_name(to);
    ASSERT_TRUE(recv == "c10d::recv_" || recv == "gloo:recv") << recv;
    EXPECT_NE(timeline_.devices[from.device].rank, timeline_.devices[to.device].rank);
    EXPECT_EQ(from.microbatch, to.microbatch);
    EXPECT_EQ(from.phase, to.phase);
    EXPECT_EQ(to.stage, from.stage + (from.phase == Phase::kForward ? 1 : -1));
    EXPECT_LE(from.begin_ns, to.end_ns) << "a flow back in time, into " << recv;
    ++(recv == "c10d::recv_" ? paired : covered);
  }
  EXPECT_EQ(paired, 0u);
  EXPECT_EQ(covered, expected);
}

// `meshscope convert` of the job, read back as the per-rank files of a job are (load_traces, as
// `predict --from-trace` reads it), is the job: its ranks' devices with their names and mesh
// coordinates, its flows once, each rank's actions and the pipeline groups. Before, the export
// was taken for one rank: every device became rank 0, the ranks' keys nested, the sends were
// paired a second time.
TEST_P(TorchFixture, ItsExportReadsBackAsTheSameJob) {
  const testing::TempFile file(".json", export_chrome_json(timeline_));
  const std::vector<std::filesystem::path> paths = {file.path()};
  const Timeline back = load_traces(paths);
  ASSERT_EQ(back.devices.size(), timeline_.devices.size());
  for (size_t d = 0; d < back.devices.size(); ++d) {
    EXPECT_EQ(back.devices[d].name, timeline_.devices[d].name);
    EXPECT_EQ(back.devices[d].rank, timeline_.devices[d].rank);
    EXPECT_EQ(back.devices[d].coord, timeline_.devices[d].coord) << back.devices[d].name;
    // torch's c10d::send crosses its gloo:send on one thread: the export puts one of them on an
    // extra thread (Perfetto would drop it), which the import folds back into its lane.
    ASSERT_EQ(back.devices[d].lanes.size(), timeline_.devices[d].lanes.size())
        << back.devices[d].name;
    for (size_t l = 0; l < back.devices[d].lanes.size(); ++l)
      EXPECT_EQ(back.devices[d].lanes[l].name, timeline_.devices[d].lanes[l].name);
  }
  EXPECT_EQ(back.spans.size(), timeline_.spans.size());
  std::map<std::tuple<int, int, int64_t, int64_t>, int> where, where_back;  // device, lane, times
  for (const Span& sp : timeline_.spans) ++where[{sp.device, sp.lane, sp.begin_ns, sp.end_ns}];
  for (const Span& sp : back.spans) ++where_back[{sp.device, sp.lane, sp.begin_ns, sp.end_ns}];
  EXPECT_TRUE(where == where_back) << "spans read back on other lanes or at other times";
  EXPECT_EQ(back.flows.size(), timeline_.flows.size());
  EXPECT_EQ(importer::torch_action_orders(back), importer::torch_action_orders(timeline_));
  EXPECT_EQ(importer::torch_pipeline_groups(back), importer::torch_pipeline_groups(timeline_));
  EXPECT_EQ(back.metadata.at("ranks"), timeline_.metadata.at("ranks"));
  // Beside another rank's file it is refused: a whole job is not one rank of several.
  const std::vector<std::filesystem::path> mixed = {file.path(), dir_ / "rank0.json.gz"};
  try {
    (void)load_traces(mixed);
    ADD_FAILURE() << "a whole job was read as one rank";
  } catch (const ImportError& e) {
    EXPECT_NE(std::string(e.what()).find(": holds a whole job of "), std::string::npos) << e.what();
  }
}

// Each rank's file converted on its own, the conversions read together: the same job again.
TEST_P(TorchFixture, ItsRanksConvertedOneByOneReadBackAsTheSameJob) {
  std::vector<std::unique_ptr<testing::TempFile>> files;
  std::vector<std::filesystem::path> paths;
  for (const auto& rank : trace_files_in(dir_)) {
    // As `convert` reads one file: load_trace, not a merge of one.
    files.push_back(
        std::make_unique<testing::TempFile>(".json", export_chrome_json(load_trace(rank))));
    paths.push_back(files.back()->path());
  }
  const Timeline back = load_traces(paths);
  ASSERT_EQ(back.devices.size(), timeline_.devices.size());
  for (size_t d = 0; d < back.devices.size(); ++d) {
    EXPECT_EQ(back.devices[d].rank, timeline_.devices[d].rank);
    EXPECT_EQ(back.devices[d].coord, timeline_.devices[d].coord) << back.devices[d].name;
  }
  EXPECT_EQ(back.flows.size(), timeline_.flows.size());
  EXPECT_EQ(importer::torch_action_orders(back), importer::torch_action_orders(timeline_));
}

INSTANTIATE_TEST_SUITE_P(Torch215, TorchFixture,
                         ::testing::Values("GPipe", "1F1B", "Interleaved1F1B", "LoopedBFS",
                                           "InterleavedZeroBubble", "ZBVZeroBubble", "DualPipeV"));

}  // namespace
// A dp 2 x pp 2 job: each rank's distributedInfo.pg_config (the process groups it belongs to,
// with their global ranks) is kept as metadata "rank R.process_groups".
TEST(TorchPipelineImport, KeepsTheProcessGroupsOfEachRank) {
  const std::filesystem::path job = kFixtures / "dp2_Interleaved1F1B";
  const std::vector<std::filesystem::path> one = {job / "rank2.json.gz"};
  const Timeline t = load_traces(one);
  EXPECT_EQ(t.metadata.at("rank 2.process_groups"), "default_pg=0,1,2,3;pp1=2,3;dp0=0,2");
  const std::vector<std::filesystem::path> all = {job};
  const Timeline merged = load_traces(all);
  EXPECT_EQ(merged.metadata.at("rank 1.process_groups"), "default_pg=0,1,2,3;pp0=0,1;dp1=1,3");
  EXPECT_EQ(merged.metadata.at("rank 3.process_groups"), "default_pg=0,1,2,3;pp1=2,3;dp1=1,3");
}

// Each pipeline group of that job is placed and paired on its own: ranks 0, 1 run replica 0 and
// ranks 2, 3 replica 1, each with stages 0 and 2 on its first rank; every send → recv flow stays
// inside one replica, and each replica's cross-rank sends are all paired.
TEST(TorchPipelineImport, SeparatesThePipelineGroupsOfADataParallelJob) {
  const std::vector<std::filesystem::path> all = {kFixtures / "dp2_Interleaved1F1B"};
  const Timeline t = load_traces(all);
  EXPECT_EQ(importer::torch_pipeline_groups(t), (std::vector<std::vector<int>>{{0, 1}, {2, 3}}));
  for (const Device& d : t.devices) {
    if (d.lanes.empty() || d.lanes[0].kind == LaneKind::kHost) continue;
    SCOPED_TRACE(d.name);
    EXPECT_EQ(d.coord.dp, d.rank / 2);
    EXPECT_EQ(d.coord.pp, d.rank % 2);
  }
  std::map<int, int> flows_by_group;
  for (const Flow& f : t.flows) {
    const std::string_view from = t.span_name(t.spans[f.from]);
    if (from != "c10d::send" && from != "gloo:send") continue;
    const int a = t.devices[t.spans[f.from].device].rank;
    const int b = t.devices[t.spans[f.to].device].rank;
    EXPECT_EQ(a / 2, b / 2) << "flow from rank " << a << " to rank " << b;
    ++flows_by_group[a / 2];
  }
  // 4 microbatches x (3 forward + 3 backward cross-rank hops), each to its gloo range.
  EXPECT_EQ(flows_by_group[0], 24);
  EXPECT_EQ(flows_by_group[1], 24);
  EXPECT_EQ(t.metadata.at("pipeline_stage_owner"), "0 1 0 1");
}

// Files without distributedInfo are numbered in the folder's order, numbers in numeric order
// (rank10.json had been rank 2 of an 11-rank job), and a single-stage rank's stage is its place
// in the pipeline (its own file can say only its rank, which it does not know: every GPipe rank
// had read as stage 0, and the schedule as stage 0 on every row).
TEST(TorchPipelineImport, RanksWithoutDistributedInfoAreNumberedInTheFoldersOrder) {
  EXPECT_TRUE(natural_less("rank2.json", "rank10.json"));
  EXPECT_FALSE(natural_less("rank10.json", "rank2.json"));
  EXPECT_TRUE(natural_less("rank9.json.gz", "rank10.json"));
  EXPECT_TRUE(natural_less("a.json", "b.json"));
  EXPECT_TRUE(natural_less("rank01.json", "rank1.json"));  // equal as numbers: by their bytes
  EXPECT_FALSE(natural_less("rank1.json", "rank01.json"));
  const auto dir = std::filesystem::temp_directory_path() / "meshscope_torch_no_distinfo";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  for (int r = 0; r < 4; ++r) {
    nlohmann::json j = nlohmann::json::parse(
        testing::read_gz(kFixtures / "GPipe" / ("rank" + std::to_string(r) + ".json.gz")));
    j.erase("distributedInfo");
    // Named so that byte order is not rank order: rank 2 is "rank9", rank 3 "rank10", which bytes
    // put first.
    const int number = r < 2 ? r : (r == 2 ? 9 : 10);
    std::ofstream(dir / ("rank" + std::to_string(number) + ".json")) << j.dump();
  }
  const std::vector<std::filesystem::path> folder = {dir};
  ImportReport report;
  const Timeline t = load_traces(folder, {}, &report);
  ASSERT_EQ(report.clocks.size(), 4u);
  for (const RankClock& c : report.clocks) {
    const int number = c.rank < 2 ? c.rank : (c.rank == 2 ? 9 : 10);
    EXPECT_EQ(std::filesystem::path(c.file).filename(), "rank" + std::to_string(number) + ".json");
  }
  const std::map<int, std::vector<std::string>> orders = importer::torch_action_orders(t);
  ASSERT_EQ(orders.size(), 4u);
  for (const auto& [rank, actions] : orders) {
    ASSERT_FALSE(actions.empty()) << rank;
    EXPECT_EQ(actions.front(), std::to_string(rank) + "F0") << rank;  // stage = pipeline rank
  }
  EXPECT_EQ(t.metadata.at("pipeline_stage_owner"), "0 1 2 3");
  std::filesystem::remove_all(dir);
}

}  // namespace meshscope::traces
