// Numerical equivalence: after k steps every schedule family, and dp x pp x tp combined, gives the
// loss and weights of one device running the same model on the same data (within 1e-5 relative),
// for the MLP, the classifier and the seed chain.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <tuple>

#include "exec_test_util.h"
#include "ordered_channel_backend.h"
#include "profiler/capture/host_tracer.h"
#include "sim/model/weights.h"
#include "sim/schedule/schedule_file.h"
#include "sim/schedule/schedule_text.h"
#include "sim/schedule/validator.h"

namespace meshscope::exec {
namespace {

using schedule::Family;
using testing::expect_equivalent;
using testing::make_schedule;
using testing::run_cpu;

constexpr int kSteps = 3;

model::WorkloadSpec mlp_spec() { return testing::small_mlp_spec(7); }

model::WorkloadSpec classifier_spec() {
  return {.kind = model::WorkloadKind::kClassifier, .batch = 16, .lr = 0.1f, .seed = 3};
}

model::WorkloadSpec chain_spec() {
  return {.kind = model::WorkloadKind::kChain, .batch = 8, .lr = 0.05f, .seed = 11};
}

struct Case {
  std::string name;
  Family family;
  mesh::MeshShape mesh;
  int microbatches;
  int virtual_stages;
};

void check(const model::WorkloadSpec& spec, const Case& c) {
  static std::map<std::tuple<int, uint64_t>, ReferenceResult> cache;
  const auto key = std::make_tuple(static_cast<int>(spec.kind), spec.seed);
  if (!cache.count(key)) cache[key] = run_reference(spec, kSteps);
  const auto s =
      testing::make_schedule_for(spec, c.family, c.mesh, c.microbatches, c.virtual_stages);
  const RunResult got = run_cpu(s, spec, kSteps);
  expect_equivalent(got, cache[key], std::string(model::name(spec.kind)) + " " + c.name);
}

const std::vector<Case> kPipelineCases = {
    {"naive pp4", Family::kNaive, {1, 4, 1}, 4, 1},
    {"gpipe pp4", Family::kGpipe, {1, 4, 1}, 4, 1},
    {"1f1b pp4", Family::kOneFOneB, {1, 4, 1}, 8, 1},
    {"interleaved pp2 v2", Family::kInterleaved, {1, 2, 1}, 4, 2},
    {"interleaved pp2 v4", Family::kInterleaved, {1, 2, 1}, 2, 4},
    // Adjacent stages on one rank hand data over without transfers.
    {"interleaved pp1 v4", Family::kInterleaved, {1, 1, 1}, 2, 4},
    {"zb-h1 pp4", Family::kZbH1, {1, 4, 1}, 4, 1},
    {"tp4", Family::kTensorParallel, {1, 1, 4}, 2, 1},
    {"dp4", Family::kDataParallel, {4, 1, 1}, 2, 1},
    {"1f1b dp2 pp2 tp2", Family::kOneFOneB, {2, 2, 2}, 4, 1},
    {"zb-h1 dp2 pp2 tp2", Family::kZbH1, {2, 2, 2}, 2, 1},
    {"interleaved dp2 pp2 tp2 v2", Family::kInterleaved, {2, 2, 2}, 2, 2},
};

TEST(ExecutorEquivalence, MlpEveryFamilyMatchesOneDevice) {
  for (const Case& c : kPipelineCases) check(mlp_spec(), c);
}

// The families taken from torch.distributed.pipelining: the V placement of zb-v and dualpipe-v
// (rank r holds stages r and 2pp-1-r), dualpipe-v's overlapped F/B pairs, I/W splits across chunks,
// looped BFS's reversed backwards.
const std::vector<Case> kTorchFamilyCases = {
    {"zb-v pp2", Family::kZbV, {1, 2, 1}, 4, 2},
    {"zb-v pp4", Family::kZbV, {1, 4, 1}, 4, 2},
    {"zb-v dp2 pp2 tp2", Family::kZbV, {2, 2, 2}, 2, 2},
    {"dualpipe-v pp2", Family::kDualPipeV, {1, 2, 1}, 4, 2},
    {"dualpipe-v pp4", Family::kDualPipeV, {1, 4, 1}, 8, 2},
    {"dualpipe-v dp2 pp2 tp2", Family::kDualPipeV, {2, 2, 2}, 4, 2},
    {"interleaved-zb pp2 v2", Family::kInterleavedZeroBubble, {1, 2, 1}, 4, 2},
    {"interleaved-zb pp4 v2", Family::kInterleavedZeroBubble, {1, 4, 1}, 4, 2},
    {"interleaved-zb dp2 pp2 tp2 v4", Family::kInterleavedZeroBubble, {2, 2, 2}, 2, 4},
    {"looped-bfs pp2 v2", Family::kLoopedBfs, {1, 2, 1}, 4, 2},
    {"looped-bfs pp2 v4", Family::kLoopedBfs, {1, 2, 1}, 2, 4},
    {"looped-bfs dp2 pp2 tp2 v2", Family::kLoopedBfs, {2, 2, 2}, 2, 2},
};

TEST(ExecutorEquivalence, TorchFamiliesMatchOneDevice) {
  for (const Case& c : kTorchFamilyCases) check(mlp_spec(), c);
}

// torch's own lowering (compute_comms CSVs torch 2.15 wrote: its SEND/RECV order, OVERLAP_F_B,
// the V placement) runs in meshscope equal to one device, for every fixture whose microbatches
// divide the batch and whose stages the 8 layers cover.
TEST(ExecutorEquivalence, TorchsOwnSchedulesMatchOneDevice) {
  const auto spec = mlp_spec();
  const ReferenceResult ref = run_reference(spec, kSteps);
  const std::filesystem::path dir =
      std::filesystem::path(MESHSCOPE_SOURCE_DIR) / "tests/fixtures/torch_orders";
  int ran = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (!e.path().string().ends_with(".compute_comms.csv")) continue;
    const schedule::Schedule s = schedule::load_schedule_file(e.path().string()).schedule;
    if (spec.batch % s.num_microbatches != 0 || s.num_stages > spec.layers) continue;
    expect_equivalent(run_cpu(s, spec, kSteps), ref, e.path().filename().string());
    ++ran;
  }
  EXPECT_GE(ran, 8);
}

TEST(ExecutorEquivalence, ClassifierMatchesOneDevice) {
  // Two layers: pipelines of two stages, tp over the 256 hidden units, dp over the batch.
  const std::vector<Case> cases = {
      {"gpipe pp2", Family::kGpipe, {1, 2, 1}, 4, 1},
      {"1f1b pp2", Family::kOneFOneB, {1, 2, 1}, 4, 1},
      {"zb-h1 pp2", Family::kZbH1, {1, 2, 1}, 2, 1},
      {"tp2", Family::kTensorParallel, {1, 1, 2}, 2, 1},
      {"dp2", Family::kDataParallel, {2, 1, 1}, 4, 1},
      {"1f1b dp2 pp2 tp2", Family::kOneFOneB, {2, 2, 2}, 2, 1},
  };
  for (const Case& c : cases) check(classifier_spec(), c);
}

TEST(ExecutorEquivalence, SeedChainMatchesOneDevice) {
  const std::vector<Case> cases = {
      {"naive pp3", Family::kNaive, {1, 3, 1}, 2, 1},
      {"gpipe pp3", Family::kGpipe, {1, 3, 1}, 4, 1},
      {"1f1b pp3", Family::kOneFOneB, {1, 3, 1}, 4, 1},
      {"zb-h1 pp3", Family::kZbH1, {1, 3, 1}, 4, 1},
      {"dp2 pp3", Family::kOneFOneB, {2, 3, 1}, 2, 1},
  };
  for (const Case& c : cases) check(chain_spec(), c);
}

TEST(ExecutorEquivalence, TrainingMovesTheWeights) {
  // The comparisons above mean something only if the steps change the weights well beyond the
  // tolerance: check the reference really trains.
  const auto spec = mlp_spec();
  const ReferenceResult ref = run_reference(spec, kSteps);
  const auto initial = model::init_weights(model::make_workload(spec));
  for (size_t i = 0; i < initial.size(); ++i) {
    EXPECT_GT(relative_error(ref.weights[i].w, initial[i].w), 1e-3) << initial[i].name;
  }
  EXPECT_LT(ref.losses.back(), ref.losses.front());
}

TEST(ExecutorEquivalence, MissingGradientAllReduceIsDetected) {
  // A dp schedule without its gradient all-reduce trains each replica on half the batch: the
  // comparison must catch that.
  auto s = make_schedule(Family::kDataParallel, {2, 1, 1}, 2);
  for (auto& program : s.ranks) {
    std::erase_if(program,
                  [](const schedule::Action& a) { return schedule::is_collective(a.kind); });
  }
  const auto spec = mlp_spec();
  const RunResult got = run_cpu(s, spec, kSteps);
  const ReferenceResult ref = run_reference(spec, kSteps);
  double worst = 0;
  for (size_t i = 0; i < ref.weights.size(); ++i) {
    worst = std::max(worst, relative_error(got.weights[i].w, ref.weights[i].w));
  }
  EXPECT_GT(worst, 1e-4);
}

// On channels that deliver in send order (the cuda backend's NCCL pairs), a schedule that
// receives in another order than it sends still computes the right thing: the executor tells each
// sender its peers' receive order and the sends are released in it.
RunResult run_on_ordered_channels(const schedule::Schedule& s, const model::WorkloadSpec& spec,
                                  bool give_order, int* held_sends = nullptr) {
  runtime::testing::OrderedChannelBackend backend(s.mesh);
  if (!give_order) {
    for (int r = 0; r < backend.world_size(); ++r) backend.ordered(r).ignore_recv_order();
  }
  capture::HostClockTracer tracer;
  RunConfig c;
  c.workload = spec;
  c.schedule = s;
  c.steps = kSteps;
  c.timeout_s = 30;
  RunResult r = run(c, backend, tracer);
  if (held_sends != nullptr) {
    *held_sends = 0;
    for (int rank = 0; rank < backend.world_size(); ++rank) {
      *held_sends += backend.ordered(rank).held_sends();
    }
  }
  return r;
}

// GPipe on two stages, valid under the validator's keyed matching, with both receivers taking
// their two messages in the opposite order of the sends.
const char* kCrossedReceives =
    "mesh dp=1 pp=2 tp=1\nmicrobatches 2\n"
    "rank 0: 0F0 0SEND_F0 0F1 0SEND_F1 0RECV_B1 0RECV_B0 0B0 0B1 0STEP\n"
    "rank 1: 1RECV_F1 1RECV_F0 1F0 1F1 1B0 1SEND_B0 1B1 1SEND_B1 1STEP\n";

TEST(ExecutorEquivalence, ReceivesOutOfSendOrderOnInOrderChannelsMatchOneDevice) {
  const auto s = schedule::load(kCrossedReceives);
  ASSERT_TRUE(schedule::validate(s).ok());
  const auto spec = chain_spec();  // two stages need a model of at least two layers
  int held = 0;
  expect_equivalent(run_on_ordered_channels(s, spec, true, &held), run_reference(spec, kSteps),
                    "crossed receives");
  EXPECT_EQ(held, 2 * kSteps);  // F0 waits for F1, B0 for B1, every step
}

TEST(ExecutorEquivalence, InOrderChannelsWithoutTheReceiveOrderPairTheWrongMessages) {
  // The control: the same run, the sends not held back, is caught by the channel's tag check.
  const auto s = schedule::load(kCrossedReceives);
  try {
    run_on_ordered_channels(s, chain_spec(), false);
    FAIL() << "the channel paired the crossed receives without complaint";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("but the channel delivers tag"), std::string::npos)
        << e.what();
  }
}

TEST(ExecutorEquivalence, GeneratedFamiliesRunOnInOrderChannelsWithoutHoldingASend) {
  // The generators place every receive in its sender's order (interleaved included, where a rank
  // sends to the same neighbour for several stages), so the cuda backend never delays a send.
  const auto spec = mlp_spec();
  const ReferenceResult ref = run_reference(spec, kSteps);
  for (const Case& c :
       std::vector<Case>{{"interleaved pp2 v2", Family::kInterleaved, {1, 2, 1}, 4, 2},
                         {"interleaved dp2 pp2 v4", Family::kInterleaved, {2, 2, 1}, 2, 4},
                         {"interleaved pp4 v2", Family::kInterleaved, {1, 4, 1}, 8, 2},
                         {"gpipe pp4", Family::kGpipe, {1, 4, 1}, 4, 1},
                         {"1f1b pp4", Family::kOneFOneB, {1, 4, 1}, 8, 1},
                         {"zb-h1 pp4", Family::kZbH1, {1, 4, 1}, 4, 1},
                         {"zb-v pp4", Family::kZbV, {1, 4, 1}, 4, 2},
                         {"interleaved-zb pp4 v2", Family::kInterleavedZeroBubble, {1, 4, 1}, 4, 2},
                         {"looped-bfs pp2 v4", Family::kLoopedBfs, {1, 2, 1}, 2, 4}}) {
    const auto s =
        testing::make_schedule_for(spec, c.family, c.mesh, c.microbatches, c.virtual_stages);
    int held = -1;
    expect_equivalent(run_on_ordered_channels(s, spec, true, &held), ref, c.name);
    EXPECT_EQ(held, 0) << c.name;
  }
}

TEST(ExecutorEquivalence, DualPipeVHoldsSendsOnInOrderChannelsAndStillMatches) {
  // dualpipe-v's overlapped pairs send activations and gradients to the same neighbour (rank r
  // holds stages r and 2pp-1-r; both r+1 and 2pp-2-r live on rank r+1), and that neighbour takes
  // them in torch's order, not the order they were sent: an in-order channel holds some sends
  // back (the cuda backend delays them), and the result is still one device's.
  const auto spec = mlp_spec();
  const auto s = testing::make_schedule_for(spec, Family::kDualPipeV, {1, 4, 1}, 8, 2);
  int held = -1;
  expect_equivalent(run_on_ordered_channels(s, spec, true, &held), run_reference(spec, kSteps),
                    "dualpipe-v pp4");
  EXPECT_GT(held, 0);
}

TEST(ExecutorEquivalence, ScheduleForAnotherModelSizeIsRejected) {
  // Transfer sizes written for h = 32 do not fit h = 16: refused before anything runs.
  auto other = mlp_spec();
  other.hidden = 32;
  const auto s = testing::make_schedule_for(other, Family::kOneFOneB, {1, 2, 1}, 4);
  EXPECT_THROW(run_cpu(s, mlp_spec(), 1), std::invalid_argument);
}

}  // namespace
}  // namespace meshscope::exec
