// The cpu backend: messages are real copies matched by (source, tag) in FIFO order and never block
// the sender; collectives give every member the same result; abort wakes every blocked thread.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <numeric>
#include <sstream>
#include <thread>
#include <vector>

#include "profiler/runtime/backend.h"
#include "profiler/runtime/clock.h"

namespace meshscope::runtime {
namespace {

using mesh::GroupKind;

std::unique_ptr<Backend> cpu(mesh::MeshShape shape) {
  return make_backend(BackendKind::kCpu, BackendOptions{shape});
}

// Runs fn(rank) on one thread per rank and rethrows the first failure.
template <typename Fn>
void on_ranks(Backend& b, Fn fn) {
  std::vector<std::future<void>> f;
  for (int r = 0; r < b.world_size(); ++r) {
    f.push_back(std::async(std::launch::async, [&, r] {
      b.attach_thread(r);
      fn(r);
    }));
  }
  for (auto& x : f) x.get();
}

TEST(CpuBackend, SendCopiesAndNeverWaitsForTheReceiver) {
  auto b = cpu({1, 2, 1});
  std::vector<float> data = {1, 2, 3};
  // Both sends complete before any recv is posted: sends are buffered.
  b->transport(0).send(1, 7, data.data(), 12);
  data[0] = 100;  // the sender may reuse its buffer at once
  b->transport(0).send(1, 7, data.data(), 12);
  std::vector<float> got(3);
  b->transport(1).recv(0, 7, got.data(), 12);
  EXPECT_EQ(got, (std::vector<float>{1, 2, 3}));
  b->transport(1).recv(0, 7, got.data(), 12);
  EXPECT_EQ(got, (std::vector<float>{100, 2, 3}));
}

TEST(CpuBackend, SendReportsWhenItHandedThePayloadOver) {
  auto b = cpu({1, 2, 1});
  const float x = 3;
  const int64_t t0 = host_now_ns();
  const TransferInfo sent = b->transport(0).send(1, 4, &x, sizeof x);
  const int64_t t1 = host_now_ns();
  EXPECT_GE(sent.done_ns, t0);
  EXPECT_LE(sent.done_ns, t1);
  float got = 0;
  EXPECT_GE(b->transport(1).recv(0, 4, &got, sizeof got).ready_ns, sent.done_ns);
  EXPECT_EQ(got, 3);
}

TEST(CpuBackend, RecvMatchesTagAndSourceAndReportsReadyTime) {
  auto b = cpu({1, 3, 1});
  float a = 1, c = 2, d = 3;
  b->transport(0).send(2, 1, &a, 4);
  b->transport(1).send(2, 1, &c, 4);
  b->transport(0).send(2, 2, &d, 4);
  float x = 0;
  b->transport(2).recv(0, 2, &x, 4);
  EXPECT_EQ(x, 3);
  b->transport(2).recv(1, 1, &x, 4);
  EXPECT_EQ(x, 2);
  const TransferInfo info = b->transport(2).recv(0, 1, &x, 4);
  EXPECT_EQ(x, 1);
  EXPECT_GT(info.ready_ns, 0);
}

TEST(CpuBackend, RecvBlocksUntilTheSendAndRejectsSizeMismatch) {
  auto b = cpu({1, 2, 1});
  std::atomic<bool> sent{false};
  on_ranks(*b, [&](int r) {
    float v = 0;
    if (r == 1) {
      b->transport(1).recv(0, 0, &v, 4);
      EXPECT_TRUE(sent.load());
      EXPECT_EQ(v, 42);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      v = 42;
      sent = true;
      b->transport(0).send(1, 0, &v, 4);
    }
  });
  double big = 1;
  b->transport(0).send(1, 5, &big, 8);
  float small = 0;
  EXPECT_THROW(b->transport(1).recv(0, 5, &small, 4), std::runtime_error);
  EXPECT_THROW(b->transport(0).send(9, 0, &small, 4), std::runtime_error);
}

TEST(CpuBackend, AllReduceSumsWithinEachGroupOnly) {
  auto b = cpu({2, 1, 2});  // tp groups {0,1} {2,3}; dp groups {0,2} {1,3}
  std::vector<std::vector<float>> tp(4), dp(4);
  on_ranks(*b, [&](int r) {
    tp[r] = {float(r), float(10 * r)};
    b->transport(r).all_reduce(GroupKind::kTp, tp[r].data(), 2);
    dp[r] = {float(r + 1)};
    b->transport(r).all_reduce(GroupKind::kDp, dp[r].data(), 1);
  });
  EXPECT_EQ(tp[0], (std::vector<float>{1, 10}));
  EXPECT_EQ(tp[1], (std::vector<float>{1, 10}));
  EXPECT_EQ(tp[2], (std::vector<float>{5, 50}));
  EXPECT_EQ(tp[3], (std::vector<float>{5, 50}));
  EXPECT_EQ(dp[0][0], 4);  // ranks 0 and 2
  EXPECT_EQ(dp[1][0], 6);  // ranks 1 and 3
}

TEST(CpuBackend, AllGatherAndReduceScatterFollowGroupOrder) {
  auto b = cpu({1, 1, 3});
  std::vector<std::vector<float>> gathered(3, std::vector<float>(6)), scattered(3);
  on_ranks(*b, [&](int r) {
    const float mine[2] = {float(r), float(r) + 0.5f};
    b->transport(r).all_gather(GroupKind::kTp, mine, gathered[r].data(), 2);
    std::vector<float> src(3);
    std::iota(src.begin(), src.end(), float(r * 10));  // r*10, r*10+1, r*10+2
    scattered[r].resize(1);
    b->transport(r).reduce_scatter(GroupKind::kTp, src.data(), scattered[r].data(), 1);
  });
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(gathered[r], (std::vector<float>{0, 0.5f, 1, 1.5f, 2, 2.5f}));
    EXPECT_EQ(scattered[r][0], 30.0f + 3 * r);  // sum over members of (member*10 + r)
  }
}

TEST(CpuBackend, AllToAllSendsBlockKToMemberK) {
  auto b = cpu({1, 1, 3});
  std::vector<std::vector<float>> got(3, std::vector<float>(6));
  on_ranks(*b, [&](int r) {
    std::vector<float> src(6);  // block k (2 floats) for member k: 100 r + 10 k + j
    for (int k = 0; k < 3; ++k) {
      for (int j = 0; j < 2; ++j) src[k * 2 + j] = float(100 * r + 10 * k + j);
    }
    b->transport(r).all_to_all(GroupKind::kTp, src.data(), got[r].data(), 2);
    std::fill(src.begin(), src.end(), -1.f);  // the others may still be copying: must not matter
  });
  for (int r = 0; r < 3; ++r) {
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 2; ++j) {
        EXPECT_EQ(got[r][i * 2 + j], float(100 * i + 10 * r + j)) << r << " " << i << " " << j;
      }
    }
  }
}

TEST(CpuBackend, CollectiveCountMismatchFailsEveryMember) {
  auto b = cpu({1, 1, 2});
  std::atomic<int> failures{0};
  on_ranks(*b, [&](int r) {
    std::vector<float> v(4);
    try {
      b->transport(r).all_reduce(GroupKind::kTp, v.data(), r == 0 ? 4 : 3);
    } catch (const std::runtime_error&) {
      ++failures;
    }
  });
  EXPECT_EQ(failures, 2);
}

TEST(CpuBackend, AbortWakesEveryBlockedCallWithTheReason) {
  auto b = cpu({1, 1, 3});
  std::vector<std::string> errors(3);
  std::vector<std::thread> threads;
  for (int r = 0; r < 3; ++r) {
    threads.emplace_back([&, r] {
      try {
        float v = 0;
        if (r == 0)
          b->transport(0).recv(1, 0, &v, 4);  // never sent
        else
          b->transport(r).all_reduce(GroupKind::kTp, &v, 1);  // rank 0 never joins
      } catch (const Aborted& e) {
        errors[r] = e.what();
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  b->abort("stop: test");
  b->abort("second reason is ignored");
  for (auto& t : threads) t.join();
  for (const auto& e : errors) EXPECT_EQ(e, "stop: test");
  EXPECT_TRUE(b->aborted());
  float v = 0;
  EXPECT_THROW(b->transport(1).send(0, 0, &v, 4), Aborted);
}

TEST(CpuBackend, EveryCallAfterAnAbortThrowsEvenWithItsMessageQueued) {
  // A rank whose inputs were all sent before the abort must still stop at its next call, not
  // run on through its program.
  auto b = cpu({1, 2, 1});
  const float x = 1;
  b->transport(0).send(1, 7, &x, sizeof x);
  b->abort("stop: test");
  float got = 0;
  try {
    b->transport(1).recv(0, 7, &got, sizeof got);
    FAIL() << "recv returned after the abort";
  } catch (const Aborted& e) {
    EXPECT_STREQ(e.what(), "stop: test");
  }
  EXPECT_THROW(b->transport(1).all_reduce(GroupKind::kPp, &got, 1), Aborted);
}

TEST(CpuBackend, FactoryResolvesAutoSaysWhyAndParsesNames) {
  std::ostringstream log;
  const BackendKind picked = resolve_backend_kind(BackendKind::kAuto, {1, 2, 1}, &log);
  EXPECT_EQ(log.str().rfind("backend: " + std::string(name(picked)) + " (", 0), 0u) << log.str();
  if (picked == BackendKind::kCpu) {
    // No GPU (or no CUDA in this build): auto says so, and asking for cuda explicitly fails with a
    // message instead of falling back silently.
    EXPECT_NE(log.str().find("no GPU"), std::string::npos) << log.str();
    EXPECT_THROW(make_backend(BackendKind::kCuda, BackendOptions{{1, 1, 1}}), std::runtime_error);
  }
  if (!cuda_backends_built()) {
    EXPECT_EQ(picked, BackendKind::kCpu);
  }
  EXPECT_EQ(resolve_backend_kind(BackendKind::kCpu, {1, 1, 1}, &log), BackendKind::kCpu);
  EXPECT_EQ(parse_backend_kind("cuda-virtual"), BackendKind::kCudaVirtual);
  EXPECT_EQ(parse_backend_kind("tpu"), std::nullopt);
  EXPECT_EQ(cpu({2, 2, 2})->description(), "cpu (8 threads)");
}

TEST(CpuBackend, DeviceOpsRoundTripAndMath) {
  auto b = cpu({1, 1, 1});
  DeviceOps& d = b->device(0);
  DeviceBuffer x(d, 4 * sizeof(float)), loss(d, sizeof(double));
  const float host[4] = {1, 2, 3, 4};
  d.upload(x.get(), host, sizeof host);
  d.zero(loss.get(), sizeof(double));
  const float target[4] = {0, 0, 0, 0};
  DeviceBuffer t(d, sizeof target), g(d, sizeof target);
  d.upload(t.get(), target, sizeof target);
  d.mse(4, x.as<float>(), t.as<float>(), 0.5f, g.as<float>(), loss.as<double>());
  d.mse(4, x.as<float>(), t.as<float>(), 0.5f, g.as<float>(), loss.as<double>());
  double l = 0;
  d.download(&l, loss.get(), sizeof l);
  EXPECT_DOUBLE_EQ(l, 30.0);  // accumulates: 2 * 0.5 * (1 + 4 + 9 + 16)
}

}  // namespace
}  // namespace meshscope::runtime
