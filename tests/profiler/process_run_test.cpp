// Multi-process runs (one rank per process) with threads standing in for processes: the messenger,
// the cpu backend across processes, and the executor's exchange and merge. The same code runs
// under mpirun with an MPI link (tests/cli: the mpirun cases).
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <future>
#include <set>
#include <thread>

#include "exec_test_util.h"
#include "forwarding_tracer.h"
#include "loopback_link.h"
#include "profiler/capture/host_tracer.h"
#include "profiler/exec/process_run.h"
#include "profiler/exec/rank_plan.h"
#include "profiler/runtime/clock.h"
#include "profiler/runtime/process_cpu_backend.h"
#include "sim/schedule/schedule_text.h"
#include "tests/sim/moe_spec.h"

namespace meshscope::exec {
namespace {

using runtime::ProcessMessenger;
using runtime::testing::LoopbackHub;
using runtime::testing::LoopbackLink;
using Channel = ProcessMessenger::Channel;

std::vector<std::unique_ptr<ProcessMessenger>> messengers(int n) {
  auto hub = std::make_shared<LoopbackHub>(n);
  std::vector<std::unique_ptr<ProcessMessenger>> out;
  for (int i = 0; i < n; ++i) {
    out.push_back(std::make_unique<ProcessMessenger>(std::make_unique<LoopbackLink>(hub, i)));
  }
  return out;
}

// Runs body(i) on n threads at once and returns what each returned or threw.
template <typename T>
std::vector<std::future<T>> on_each(int n, std::function<T(int)> body) {
  std::vector<std::future<T>> out;
  for (int i = 0; i < n; ++i) out.push_back(std::async(std::launch::async, body, i));
  return out;
}

TEST(ProcessMessenger, MatchesMessagesByChannelAndTagWhateverTheirOrder) {
  auto m = messengers(2);
  const std::string a = "first", b = "second";
  m[0]->send(1, Channel::kPeer, 7, a.data(), a.size());
  m[0]->send(1, Channel::kGroup, 7, b.data(), b.size());
  m[0]->send(1, Channel::kPeer, 3, b.data(), b.size());
  m[0]->send(1, Channel::kPeer, 7, b.data(), b.size());
  EXPECT_EQ(m[1]->receive(0, Channel::kPeer, 3, "tag 3"), "second");
  EXPECT_EQ(m[1]->receive(0, Channel::kGroup, 7, "group 7"), "second");
  EXPECT_EQ(m[1]->receive(0, Channel::kPeer, 7, "tag 7"), "first");  // same key: send order
  EXPECT_EQ(m[1]->receive(0, Channel::kPeer, 7, "tag 7"), "second");
}

TEST(ProcessMessenger, ExchangeGivesEveryProcessEveryContribution) {
  auto m = messengers(3);
  auto got = on_each<std::vector<std::string>>(3, [&](int i) {
    m[i]->exchange("a" + std::to_string(i), "warm-up");
    return m[i]->exchange(std::string(static_cast<size_t>(i) * 1000, 'x'), "payload");
  });
  for (auto& f : got) {
    const auto all = f.get();
    ASSERT_EQ(all.size(), 3u);
    for (size_t i = 0; i < 3; ++i) EXPECT_EQ(all[i], std::string(i * 1000, 'x'));
  }
}

TEST(ProcessMessenger, AnAbortInOneProcessWakesTheWaitsOfTheOthers) {
  auto m = messengers(2);
  auto waiting = std::async(std::launch::async, [&] {
    try {
      // The deadline turns a missed abort into a failure instead of a hang.
      m[1]->receive(0, Channel::kPeer, 1, "a message that never comes",
                    runtime::host_now_ns() + 10'000'000'000);
      return std::string("returned");
    } catch (const runtime::Aborted& e) {
      return std::string(e.what());
    } catch (const std::runtime_error& e) {
      return std::string("not woken: ") + e.what();
    }
  });
  m[0]->abort("deadlock: rank 0 gave up");
  // Process 0 tells the others on its next wait.
  EXPECT_THROW(m[0]->receive(1, Channel::kPeer, 1, "anything"), runtime::Aborted);
  EXPECT_EQ(waiting.get(), "deadlock: rank 0 gave up");
  EXPECT_TRUE(m[1]->aborted());
}

TEST(ProcessMessenger, EndingExchangesMatchWhenProcessesStoppedAtDifferentBarriers) {
  // Process 0 reached a step barrier that process 1 never reached (it failed before): what they
  // exchange after the abort must still pair up, not be mistaken for that barrier's message.
  auto m = messengers(2);
  auto zero = std::async(std::launch::async, [&] {
    try {
      m[0]->exchange("", "the barrier before step 1");
    } catch (const runtime::Aborted&) {
    }
    return m[0]->exchange_after_abort("report of 0", "reports", runtime::host_now_ns() + 5e9);
  });
  m[1]->abort("rank 1 failed");
  const auto from_one =
      m[1]->exchange_after_abort("report of 1", "reports", runtime::host_now_ns() + 5e9);
  EXPECT_EQ(from_one, (std::vector<std::string>{"report of 0", "report of 1"}));
  EXPECT_EQ(zero.get(), (std::vector<std::string>{"report of 0", "report of 1"}));
}

TEST(ProcessMessenger, HeartbeatsReachEveryOtherProcessAndAreCountedOnce) {
  auto m = messengers(3);
  m[0]->send_heartbeat();
  m[0]->send_heartbeat();
  EXPECT_EQ(m[1]->take_heartbeats(), 2);
  EXPECT_EQ(m[2]->take_heartbeats(), 2);
  EXPECT_EQ(m[1]->take_heartbeats(), 0);  // taken
  EXPECT_EQ(m[0]->take_heartbeats(), 0);  // none to itself
  // They take no place among the messages waited for.
  m[2]->send_heartbeat();
  const std::string hello = "hi";
  m[2]->send(1, Channel::kDriver, 7, hello.data(), hello.size());
  EXPECT_EQ(m[1]->receive(2, Channel::kDriver, 7, "a test message"), "hi");
  EXPECT_EQ(m[1]->take_heartbeats(), 1);
}

TEST(ProcessMessenger, AWaitPastItsDeadlineSaysWhatItWaitedFor) {
  auto m = messengers(2);
  try {
    m[0]->receive(1, Channel::kDriver, 0, "the step barrier", runtime::host_now_ns() + 20'000'000);
    FAIL() << "returned";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "process 0: gave up waiting for the step barrier from process 1");
  }
}

TEST(ProcessMessenger, AnEndingExchangeWaitsPastItsDeadlineForAProcessStillHeardFrom) {
  // Process 1's ranks still compute (its last backward): it sends heartbeats every 20 ms for
  // 0.9 s, past the 0.2 s deadline and the 0.5 s of silence after it that end the wait for a
  // process not heard from, then its report. A process silent for 0.5 s past the deadline is
  // given up on, heard from or not before. (A silence bound of 0.2 s failed once in a loaded
  // ctest run: a heartbeat thread held off that long.)
  using std::chrono::milliseconds;
  auto m = messengers(3);
  const auto beat = [&](ProcessMessenger& p, milliseconds for_how_long) {
    const auto until = std::chrono::steady_clock::now() + for_how_long;
    while (std::chrono::steady_clock::now() < until) {
      p.send_heartbeat();
      std::this_thread::sleep_for(milliseconds(20));
    }
  };
  auto one = std::async(std::launch::async, [&] {
    beat(*m[1], milliseconds(900));
    return m[1]->exchange_after_abort("1", "reports", runtime::host_now_ns() + 5e9);
  });
  auto two = std::async(std::launch::async, [&] {
    beat(*m[2], milliseconds(1200));
    return m[2]->exchange_after_abort("2", "reports", runtime::host_now_ns() + 5e9);
  });
  const std::vector<std::string> all = {"0", "1", "2"};
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(
      m[0]->exchange_after_abort("0", "reports", runtime::host_now_ns() + 200'000'000, 500'000'000),
      all);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, milliseconds(1100));
  EXPECT_EQ(one.get(), all);
  EXPECT_EQ(two.get(), all);

  auto silent = messengers(2);
  auto late = std::async(std::launch::async, [&] { beat(*silent[1], milliseconds(300)); });
  try {
    silent[0]->exchange_after_abort("0", "reports", runtime::host_now_ns() + 100'000'000,
                                    500'000'000);
    FAIL() << "returned";
  } catch (const runtime::PeerSilentError& e) {
    EXPECT_EQ(e.peer(), 1);
  }
  late.get();
}

TEST(ProcessCpuBackend, RefusesAMeshThatIsNotOneRankPerProcess) {
  auto m = messengers(2);
  try {
    runtime::ProcessCpuBackend b(mesh::MeshShape{1, 4, 1}, *m[0]);
    FAIL() << "accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("4 ranks but 2 processes were launched"),
              std::string::npos)
        << e.what();
  }
}

TEST(ProcessCpuTransport, CollectivesGiveEveryMemberTheSameExactResult) {
  auto m = messengers(3);
  using Out = std::vector<std::vector<float>>;
  auto got = on_each<Out>(3, [&](int i) {
    runtime::ProcessCpuBackend b(mesh::MeshShape{3, 1, 1}, *m[i]);
    runtime::Transport& t = b.transport(i);
    const float x = static_cast<float>(i + 1);
    std::vector<float> reduced = {x, 10 * x};
    t.all_reduce(mesh::GroupKind::kDp, reduced.data(), reduced.size());
    std::vector<float> gathered(6);
    const std::vector<float> mine = {x, -x};
    t.all_gather(mesh::GroupKind::kDp, mine.data(), gathered.data(), 2);
    std::vector<float> scattered(2);
    std::vector<float> full(6);
    for (int k = 0; k < 6; ++k) full[k] = x * static_cast<float>(k);
    t.reduce_scatter(mesh::GroupKind::kDp, full.data(), scattered.data(), 2);
    return Out{reduced, gathered, scattered};
  });
  for (int i = 0; i < 3; ++i) {
    const Out out = got[i].get();
    EXPECT_EQ(out[0], (std::vector<float>{6, 60})) << i;
    EXPECT_EQ(out[1], (std::vector<float>{1, -1, 2, -2, 3, -3})) << i;
    // sum over members of x * k for this member's elements k = 2i, 2i + 1: 6k.
    EXPECT_EQ(out[2], (std::vector<float>{6.f * (2 * i), 6.f * (2 * i + 1)})) << i;
  }
}

TEST(ProcessCpuTransport, AllToAllSendsBlockKToMemberK) {
  auto m = messengers(3);
  auto got = on_each<std::vector<float>>(3, [&](int i) {
    runtime::ProcessCpuBackend b(mesh::MeshShape{3, 1, 1}, *m[i]);
    std::vector<float> src(6), dst(6);  // block k (2 floats) for member k: 100 i + 10 k + j
    for (int k = 0; k < 3; ++k) {
      for (int j = 0; j < 2; ++j) src[k * 2 + j] = float(100 * i + 10 * k + j);
    }
    b.transport(i).all_to_all(mesh::GroupKind::kDp, src.data(), dst.data(), 2);
    // A collective after it still pairs up: the all-to-all used the group's next tag.
    std::vector<float> one = {1.f};
    b.transport(i).all_reduce(mesh::GroupKind::kDp, one.data(), 1);
    dst.push_back(one[0]);
    return dst;
  });
  for (int r = 0; r < 3; ++r) {
    const std::vector<float> out = got[r].get();
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 2; ++j) EXPECT_EQ(out[i * 2 + j], float(100 * i + 10 * r + j)) << r;
    }
    EXPECT_EQ(out.back(), 3.f);
  }
}

// Ranks 0 and 1 of a dp group of two each make the call `first` or `second` with 4 floats in
// and 8 out; what each one's call ended with: its error, or "returned".
std::vector<std::string> two_members_calling(
    const std::function<void(runtime::Transport&, float*, float*)>& first,
    const std::function<void(runtime::Transport&, float*, float*)>& second) {
  auto m = messengers(2);
  auto got = on_each<std::string>(2, [&](int i) -> std::string {
    runtime::ProcessCpuBackend b(mesh::MeshShape{2, 1, 1}, *m[i]);
    std::vector<float> data(4, 1.f), out(8);
    try {
      (i == 0 ? first : second)(b.transport(i), data.data(), out.data());
      return "returned";
    } catch (const std::runtime_error& e) {
      return e.what();
    }
  });
  return {got[0].get(), got[1].get()};
}

TEST(ProcessCpuTransport, AllToAllMeetingAnotherCollectiveFailsNamingBoth) {
  const auto got =
      two_members_calling([](runtime::Transport& t, float* in,
                             float* out) { t.all_to_all(mesh::GroupKind::kDp, in, out, 2); },
                          [](runtime::Transport& t, float* in, float* out) {
                            t.all_gather(mesh::GroupKind::kDp, in, out, 4);
                          });
  EXPECT_EQ(got[0],
            "all_to_all of 2 floats on rank 0 met all_gather of 4 floats from rank 1 in group dp");
  EXPECT_EQ(got[1],
            "all_gather of 4 floats on rank 1 met all_to_all of 2 floats from rank 0 in group dp");
}

TEST(ProcessCpuTransport, MembersCallingDifferentCollectivesFailNamingBoth) {
  const auto got = two_members_calling(
      [](runtime::Transport& t, float* in, float*) { t.all_reduce(mesh::GroupKind::kDp, in, 4); },
      [](runtime::Transport& t, float* in, float* out) {
        t.all_gather(mesh::GroupKind::kDp, in, out, 4);
      });
  EXPECT_EQ(got[0],
            "all_reduce of 4 floats on rank 0 met all_gather of 4 floats from rank 1 in group dp");
  EXPECT_EQ(got[1],
            "all_gather of 4 floats on rank 1 met all_reduce of 4 floats from rank 0 in group dp");
}

model::WorkloadSpec mlp_spec() { return testing::small_mlp_spec(5); }

RunConfig config_for(const schedule::Schedule& s, const model::WorkloadSpec& spec,
                     double timeout_s = 30) {
  return testing::cpu_config(s, spec, 2, timeout_s);
}

// Every process runs its rank; returns process 0's result (the others' must be empty parts).
RunResult run_processes(const RunConfig& config, std::vector<double> timeouts = {}) {
  const int n = config.schedule.mesh.size();
  auto m = messengers(n);
  auto results = on_each<RunResult>(n, [&](int i) {
    RunConfig c = config;
    if (!timeouts.empty()) c.timeout_s = timeouts[i];
    runtime::ProcessCpuBackend backend(run_mesh(c.schedule.mesh, c.workload), *m[i]);
    capture::HostClockTracer tracer;
    return run(c, backend, tracer);
  });
  std::vector<RunResult> got;
  std::exception_ptr error;
  for (auto& f : results) {
    try {
      got.push_back(f.get());
    } catch (...) {
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
  for (size_t i = 1; i < got.size(); ++i) {
    EXPECT_EQ(got[i].process, static_cast<int>(i));
    EXPECT_TRUE(got[i].timeline.spans.empty());
  }
  return std::move(got[0]);
}

struct Case {
  schedule::Family family;
  mesh::MeshShape mesh;
  int microbatches;
  int virtual_stages;
};

TEST(MultiProcessRun, EqualsTheSameRunInOneProcessBitForBit) {
  const model::WorkloadSpec spec = mlp_spec();
  const Case cases[] = {
      {schedule::Family::kOneFOneB, {1, 4, 1}, 4, 1},
      {schedule::Family::kInterleaved, {1, 2, 1}, 4, 2},
      {schedule::Family::kZbH1, {1, 2, 2}, 4, 1},
      {schedule::Family::kOneFOneB, {2, 2, 1}, 4, 1},
      {schedule::Family::kTensorParallel, {1, 1, 2}, 2, 1},
  };
  for (const Case& c : cases) {
    const auto s =
        testing::make_schedule_for(spec, c.family, c.mesh, c.microbatches, c.virtual_stages);
    const std::string what = s.name + " on " + mesh::to_string(c.mesh);
    const RunResult threads = run(config_for(s, spec));
    const RunResult processes = run_processes(config_for(s, spec));
    EXPECT_EQ(processes.processes, c.mesh.size()) << what;
    ASSERT_EQ(processes.losses, threads.losses) << what;
    ASSERT_EQ(processes.weights.size(), threads.weights.size()) << what;
    for (size_t i = 0; i < threads.weights.size(); ++i) {
      EXPECT_EQ(processes.weights[i].w, threads.weights[i].w) << what << " " << i;
      EXPECT_EQ(processes.weights[i].b, threads.weights[i].b) << what << " " << i;
    }
    testing::expect_equivalent(processes, run_reference(spec, 2), what);
    EXPECT_EQ(processes.actions, threads.actions) << what;
    // The merged Timeline: every rank's spans, every transfer's flow, both steps.
    const traces::Timeline& t = processes.timeline;
    ASSERT_EQ(t.devices.size(), threads.timeline.devices.size()) << what;
    std::vector<size_t> per_device(t.devices.size(), 0);
    for (const traces::Span& sp : t.spans) ++per_device[sp.device];
    for (size_t d = 0; d < per_device.size(); ++d) EXPECT_GT(per_device[d], 0u) << what << d;
    EXPECT_EQ(t.spans.size(), threads.timeline.spans.size()) << what;
    EXPECT_EQ(t.flows.size(), threads.timeline.flows.size()) << what;
    for (const traces::Flow& f : t.flows) {
      EXPECT_EQ(t.spans[f.from].kind, traces::SpanKind::kSend) << what;
      EXPECT_EQ(t.spans[f.to].kind, traces::SpanKind::kRecv) << what;
      EXPECT_EQ(t.spans[f.from].microbatch, t.spans[f.to].microbatch) << what;
    }
    EXPECT_EQ(t.steps.size(), 2u) << what;
    EXPECT_EQ(t.metadata.at("processes"), std::to_string(c.mesh.size())) << what;
    // The typed facts travel with the parts: the run descriptor, every collective's op and group.
    EXPECT_EQ(t.run.source, traces::RunSource::kCpu) << what;
    EXPECT_EQ(t.run.mesh, (traces::MeshExtent{c.mesh.dp, c.mesh.pp, c.mesh.tp})) << what;
    EXPECT_EQ(t.run.family, s.name) << what;
    EXPECT_EQ(t.run.microbatches, c.microbatches) << what;
    EXPECT_EQ(t.run.virtual_stages, c.virtual_stages) << what;
    EXPECT_EQ(t.run.workload, threads.timeline.run.workload) << what;
    EXPECT_EQ(t.run.workload.kind, traces::ModelKind::kMlp) << what;
    size_t collective_spans = 0;
    for (uint32_t i = 0; i < t.spans.size(); ++i) {
      if (t.spans[i].kind != traces::SpanKind::kCollective) continue;
      ++collective_spans;
      const traces::Collective* op = t.collective_of(i);
      ASSERT_NE(op, nullptr) << what << " span " << i;
      EXPECT_EQ(op->op, traces::CollectiveOp::kAllReduce) << what;
      EXPECT_EQ(op->group, c.mesh.tp > 1 ? traces::GroupKind::kTp : traces::GroupKind::kDp) << what;
    }
    EXPECT_EQ(t.collectives.size(), collective_spans) << what;
    EXPECT_EQ(t.collectives.size(), threads.timeline.collectives.size()) << what;
    if (c.mesh.dp > 1 || c.mesh.tp > 1) {
      EXPECT_GT(collective_spans, 0u) << what;
    }
  }
}

// Expert parallelism across processes: the all-to-alls go through ProcessMessenger::all_to_all
// (over ep), the replicated experts' gradients through its gathers over edp, the expert weights
// come back from the parts of the processes that own them. pp 2 with ep = dp = 2, and dp 4 with
// ep 2 (every expert on two processes).
TEST(MultiProcessRun, MoeWithExpertParallelismEqualsOneProcessBitForBit) {
  // 2 blocks, batch 16, top-2, ep 2; capacity factor 0.75: drops.
  model::WorkloadSpec spec = model::testing::small_moe_spec(2, 16, 2, 0.75, 2);
  spec.lr = 0.1f;
  struct Run {
    schedule::Family family;
    mesh::MeshShape mesh;
    size_t all_to_all, edp_reduce;
  };
  // 4 ranks x blocks per rank x 2 microbatches x 4 all-to-alls x 2 steps; one edp all-reduce per
  // rank and step with ep < dp.
  for (const Run& r :
       {Run{schedule::Family::kOneFOneB, {2, 2, 1}, 4u * 1 * 2 * 4 * 2, 0},
        Run{schedule::Family::kDataParallel, {4, 1, 1}, 4u * 2 * 2 * 4 * 2, 4u * 2}}) {
    const std::string what = "moe ep2 over processes on " + mesh::to_string(r.mesh);
    const auto s = testing::make_schedule_for(spec, r.family, r.mesh, 2);
    const RunResult threads = run(config_for(s, spec));
    const RunResult processes = run_processes(config_for(s, spec));
    ASSERT_EQ(processes.losses, threads.losses) << what;
    ASSERT_EQ(processes.weights.size(), threads.weights.size()) << what;
    for (size_t i = 0; i < threads.weights.size(); ++i) {
      EXPECT_EQ(processes.weights[i].w, threads.weights[i].w) << what << threads.weights[i].name;
      EXPECT_EQ(processes.weights[i].b, threads.weights[i].b) << what << threads.weights[i].name;
    }
    const int rows = model::microbatch_rows(spec.batch, r.mesh.dp, 2);
    testing::expect_equivalent(processes, run_reference(spec, 2, rows), what);
    size_t all_to_all = 0, edp_reduce = 0;
    for (const traces::SpanCollective& c : processes.timeline.collectives) {
      all_to_all += c.collective.op == traces::CollectiveOp::kAllToAll ? 1 : 0;
      edp_reduce += c.collective.group == traces::GroupKind::kEdp ? 1 : 0;
    }
    EXPECT_EQ(all_to_all, r.all_to_all) << what;
    EXPECT_EQ(edp_reduce, r.edp_reduce) << what;
  }
}

// A host clock tracer whose begin_run (called while the run is prepared: after the weights and
// batches are made, before any rank starts) takes `delay` first: a process that prepares late.
class LatePreparingTracer final : public testing::ForwardingTracer {
 public:
  explicit LatePreparingTracer(std::chrono::milliseconds delay) : delay_(delay) {}
  void begin_run(const capture::RunInfo& run) override {
    std::this_thread::sleep_for(delay_);
    inner_.begin_run(run);
  }

 private:
  std::chrono::milliseconds delay_;
};

TEST(MultiProcessRun, AProcessThatPreparesLongerThanTheTimeoutIsNoDeadlock) {
  // Process 1 takes 1.5 s to prepare its run, five times the timeout; process 0 waits for it at
  // the first barrier and hears its heartbeats meanwhile. With the watchdog started only after
  // the preparation, process 0 reported a deadlock (mpirun on a loaded host: 10 runs in 24).
  const auto s =
      testing::make_schedule_for(mlp_spec(), schedule::Family::kOneFOneB, {1, 2, 1}, 2, 1);
  auto m = messengers(2);
  auto outcomes = on_each<std::string>(2, [&](int i) -> std::string {
    RunConfig c = config_for(s, mlp_spec(), 0.3);
    runtime::ProcessCpuBackend backend(s.mesh, *m[i]);
    LatePreparingTracer tracer(std::chrono::milliseconds(i == 1 ? 1500 : 0));
    try {
      run(c, backend, tracer);
      return "returned";
    } catch (const std::exception& e) {
      return e.what();
    }
  });
  for (auto& f : outcomes) EXPECT_EQ(f.get(), "returned");
}

TEST(MultiProcessRun, ADeadlockAcrossProcessesNamesEveryRankAndEndsEveryProcess) {
  // Both ranks receive first. Process 1's own watchdog would wait 60 s: process 0's abort must
  // end it.
  const auto s = schedule::load(
      "mesh dp=1 pp=2 tp=1\nmicrobatches 1\n"
      "rank 0: 0RECV_B0 0F0 0SEND_F0 0B0 0STEP\n"
      "rank 1: 1RECV_F0 1F0 1B0 1SEND_B0 1STEP\n");
  const auto t0 = std::chrono::steady_clock::now();
  const int n = 2;
  auto m = messengers(n);
  auto outcomes = on_each<std::string>(n, [&](int i) -> std::string {
    RunConfig c = config_for(s, mlp_spec(), i == 0 ? 0.3 : 60);
    c.workload.layers = 2;
    runtime::ProcessCpuBackend backend(s.mesh, *m[i]);
    capture::HostClockTracer tracer;
    try {
      run(c, backend, tracer);
      return "returned";
    } catch (const DeadlockError& e) {
      return i == 0 ? e.what() : "DeadlockError on a process that is not 0";
    } catch (const FailureReportedByProcessZero& e) {
      return i != 0 ? e.what() : "FailureReportedByProcessZero on process 0";
    }
  });
  for (auto& f : outcomes) {
    EXPECT_EQ(f.get(),
              "deadlock: no progress for 0.3 s; rank 0 waits at action 0 '0RECV_B0' (from rank 1); "
              "rank 1 waits at action 0 '1RECV_F0' (from rank 0)");
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
}

TEST(ProcessParts, TransfersAcrossPartsArePairedByStageAndMicrobatch) {
  traces::Timeline t;
  for (int r = 0; r < 2; ++r) {
    const uint16_t d = t.add_device(r, "rank " + std::to_string(r), {0, r, 0});
    t.add_lane(d, "comm", traces::LaneKind::kComm);
  }
  // The direction comes from kind and phase (as every producer sets them), not from the names,
  // which here say nothing.
  auto span = [&](uint16_t dev, const char* name, int stage, int mb, traces::SpanKind k,
                  int64_t at) {
    traces::Span s;
    s.device = dev;
    s.phase = std::string_view(name).find("_B") != std::string_view::npos ? traces::Phase::kBackward
                                                                          : traces::Phase::kForward;
    s.name = t.strings.intern(std::string("transfer ") + std::to_string(at));
    s.stage = static_cast<int16_t>(stage);
    s.microbatch = mb;
    s.kind = k;
    s.begin_ns = at;
    s.end_ns = at + 5;
    return t.add_span(s);
  };
  const auto send1 = span(0, "SEND_F s0 mb1", 0, 1, traces::SpanKind::kSend, 10);
  const auto send0 = span(0, "SEND_F s0 mb0", 0, 0, traces::SpanKind::kSend, 0);
  const auto grad = span(1, "SEND_B s1 mb0", 1, 0, traces::SpanKind::kSend, 30);
  const auto recv0 = span(1, "RECV_F s1 mb0", 1, 0, traces::SpanKind::kRecv, 5);
  const auto recv1 = span(1, "RECV_F s1 mb1", 1, 1, traces::SpanKind::kRecv, 15);
  const auto grad_in = span(0, "RECV_B s0 mb0", 0, 0, traces::SpanKind::kRecv, 35);
  span(0, "RECV_B s0 mb1", 0, 1, traces::SpanKind::kRecv, 40);  // its send is missing
  link_unpaired_transfers(t);
  ASSERT_EQ(t.flows.size(), 3u);
  std::set<std::pair<uint32_t, uint32_t>> flows;
  for (const auto& f : t.flows) flows.insert({f.from, f.to});
  EXPECT_TRUE(flows.count({send0, recv0}));
  EXPECT_TRUE(flows.count({send1, recv1}));
  EXPECT_TRUE(flows.count({grad, grad_in}));
}

}  // namespace
}  // namespace meshscope::exec
