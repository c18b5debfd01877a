// The cuda and cuda-virtual backends. Without a device: they refuse with "no CUDA device: ...",
// auto falls back to cpu saying why. With one (skipped otherwise): cuda-virtual's transport
// semantics on 4 virtual devices and every schedule family equal to one device.
#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>

#include "exec_test_util.h"
#include "kernels/cuda/device.h"
#include "profiler/capture/cupti/cupti_api.h"
#include "profiler/runtime/backend.h"
#include "profiler/runtime/cuda/gpu_backend.h"
#include "tests/sim/moe_spec.h"

namespace meshscope::runtime {
namespace {

bool have_gpu(std::string* why) {
  const auto probe = kernels::cuda::probe_devices();
  if (!probe.available()) *why = kernels::cuda::no_device_message(probe);
  return probe.available();
}

#define SKIP_WITHOUT_GPU()                    \
  do {                                        \
    std::string why;                          \
    if (!have_gpu(&why)) GTEST_SKIP() << why; \
  } while (0)

BackendOptions options(mesh::MeshShape shape, std::ostream* log = nullptr) {
  BackendOptions o;
  o.mesh = shape;
  o.log = log;
  return o;
}

TEST(CudaBackends, AreBuiltIntoThisBinary) { EXPECT_TRUE(cuda_backends_built()); }

TEST(CudaBackends, RefuseWithTheReasonWhenThereIsNoDevice) {
  std::string why;
  if (have_gpu(&why)) GTEST_SKIP() << "a CUDA device is present";
  for (BackendKind kind : {BackendKind::kCuda, BackendKind::kCudaVirtual}) {
    try {
      make_backend(kind, options({1, 2, 1}));
      FAIL() << name(kind) << " started without a device";
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("no CUDA device: ", 0), 0u) << e.what();
    }
  }
}

TEST(CudaBackends, AutoFallsBackToCpuAndSaysWhyOnce) {
  std::string why;
  if (have_gpu(&why)) GTEST_SKIP() << "a CUDA device is present";
  std::ostringstream log;
  EXPECT_EQ(resolve_backend_kind(BackendKind::kAuto, {1, 2, 1}, &log), BackendKind::kCpu);
  const std::string said = log.str();
  EXPECT_NE(said.find("no CUDA device"), std::string::npos) << said;
  EXPECT_EQ(std::count(said.begin(), said.end(), '\n'), 1) << said;
}

// Runs fn(rank, backend) on one thread per rank, as the executor does.
template <typename Fn>
void on_ranks(Backend& b, Fn fn) {
  std::vector<std::thread> threads;
  for (int r = 0; r < b.world_size(); ++r) {
    threads.emplace_back([&, r] {
      b.attach_thread(r);
      fn(r, b);
    });
  }
  for (auto& t : threads) t.join();
}

std::vector<float> download(DeviceOps& dev, const DeviceBuffer& buf, size_t n) {
  std::vector<float> out(n);
  dev.download(out.data(), buf.get(), n * sizeof(float));
  return out;
}

TEST(CudaVirtualBackend, SendRecvRingCarriesEveryRanksData) {
  SKIP_WITHOUT_GPU();
  auto b = make_backend(BackendKind::kCudaVirtual, options({1, 4, 1}));
  constexpr size_t n = 1000;
  std::vector<std::vector<float>> got(4);
  on_ranks(*b, [&](int r, Backend& be) {
    DeviceOps& dev = be.device(r);
    DeviceBuffer src(dev, n * sizeof(float)), dst(dev, n * sizeof(float));
    std::vector<float> mine(n, static_cast<float>(r + 1));
    dev.upload(src.get(), mine.data(), n * sizeof(float));
    be.transport(r).send((r + 1) % 4, 42, src.get(), n * sizeof(float));
    dev.fill(n, -1.f, src.as<float>());  // the sender may overwrite its buffer at once
    be.transport(r).recv((r + 3) % 4, 42, dst.get(), n * sizeof(float));
    got[r] = download(dev, dst, n);
    be.synchronize(r);
  });
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(got[r], std::vector<float>(n, static_cast<float>((r + 3) % 4 + 1))) << "rank " << r;
  }
}

TEST(CudaVirtualBackend, AllToAllSendsBlockKToMemberK) {
  SKIP_WITHOUT_GPU();
  auto b = make_backend(BackendKind::kCudaVirtual, options({4, 1, 1}));
  constexpr size_t block = 1024;
  std::vector<std::vector<float>> got(4);
  on_ranks(*b, [&](int r, Backend& be) {
    DeviceOps& dev = be.device(r);
    std::vector<float> x(4 * block);  // block k for member k: 1000 r + 100 k + j % 100
    for (size_t i = 0; i < x.size(); ++i) {
      x[i] = static_cast<float>(1000 * r + 100 * (i / block) + (i % block) % 100);
    }
    DeviceBuffer src(dev, x.size() * 4), dst(dev, x.size() * 4);
    dev.upload(src.get(), x.data(), x.size() * 4);
    be.transport(r).all_to_all(mesh::GroupKind::kDp, src.as<float>(), dst.as<float>(), block);
    got[r] = download(dev, dst, x.size());
  });
  for (int r = 0; r < 4; ++r) {
    for (size_t i = 0; i < 4 * block; ++i) {
      ASSERT_EQ(got[r][i], static_cast<float>(1000 * (i / block) + 100 * r + (i % block) % 100))
          << "rank " << r << " element " << i;
    }
  }
}

TEST(CudaVirtualBackend, CollectivesAreExactAndIdenticalOnEveryMember) {
  SKIP_WITHOUT_GPU();
  auto b = make_backend(BackendKind::kCudaVirtual, options({4, 1, 1}));
  constexpr size_t n = 4096;
  std::vector<std::vector<float>> reduced(4), gathered(4), scattered(4);
  on_ranks(*b, [&](int r, Backend& be) {
    DeviceOps& dev = be.device(r);
    Transport& net = be.transport(r);
    std::vector<float> x(n);
    for (size_t i = 0; i < n; ++i) x[i] = 0.1f * static_cast<float>(r + 1) + 1e-3f * i;
    DeviceBuffer data(dev, n * 4), all(dev, 4 * n * 4), part(dev, n / 4 * 4);
    dev.upload(data.get(), x.data(), n * 4);
    net.all_reduce(mesh::GroupKind::kDp, data.as<float>(), n);
    reduced[r] = download(dev, data, n);
    dev.upload(data.get(), x.data(), n * 4);
    net.all_gather(mesh::GroupKind::kDp, data.as<float>(), all.as<float>(), n);
    gathered[r] = download(dev, all, 4 * n);
    net.reduce_scatter(mesh::GroupKind::kDp, all.as<float>(), part.as<float>(), n / 4);
    scattered[r] = download(dev, part, n / 4);
  });
  for (size_t i = 0; i < n; ++i) {
    float expect = 0;
    for (int r = 0; r < 4; ++r) expect += 0.1f * static_cast<float>(r + 1) + 1e-3f * i;
    EXPECT_FLOAT_EQ(reduced[0][i], expect);
  }
  for (int r = 1; r < 4; ++r) EXPECT_EQ(reduced[r], reduced[0]) << "bitwise, rank " << r;
  for (int r = 0; r < 4; ++r) {
    EXPECT_FLOAT_EQ(gathered[0][r * n + 5], 0.1f * static_cast<float>(r + 1) + 5e-3f);
    EXPECT_EQ(gathered[r], gathered[0]);
    // Every member reduced the same first n gathered values: its quarter is 4x them.
    for (size_t i = 0; i < n / 4; ++i) {
      const float x = gathered[0][r * (n / 4) + i];
      EXPECT_NEAR(scattered[r][i], 4 * x, 1e-6 * std::abs(4 * x)) << "rank " << r << " i " << i;
    }
  }
}

TEST(CudaVirtualBackend, AbortWakesARankWaitingForASendThatNeverComes) {
  SKIP_WITHOUT_GPU();
  auto b = make_backend(BackendKind::kCudaVirtual, options({1, 2, 1}));
  std::thread watchdog([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    b->abort("deadlock: rank 1 waits");
  });
  b->attach_thread(1);
  DeviceBuffer dst(b->device(1), 64);
  EXPECT_THROW(b->transport(1).recv(0, 1, dst.get(), 64), Aborted);
  watchdog.join();
}

TEST(CudaVirtualBackend, ExposesEachRanksStreamsForTheTracer) {
  SKIP_WITHOUT_GPU();
  auto b = make_backend(BackendKind::kCudaVirtual, options({1, 2, 1}));
  auto* gpu = dynamic_cast<cuda::GpuBackend*>(b.get());
  ASSERT_NE(gpu, nullptr);
  EXPECT_NE(gpu->streams(0).compute, gpu->streams(1).compute);
  EXPECT_NE(gpu->streams(0).compute, gpu->streams(0).comm);
}

TEST(CudaVirtualBackend, EachVirtualDevicesStreamsAreTracedInAContextOfTheirOwn) {
  SKIP_WITHOUT_GPU();
  auto b = make_backend(BackendKind::kCudaVirtual, options({1, 4, 1}));
  if (b->description().find("green contexts x") == std::string::npos) {
    GTEST_SKIP() << "no green contexts: " << b->description();
  }
  auto* gpu = dynamic_cast<cuda::GpuBackend*>(b.get());
  ASSERT_NE(gpu, nullptr);
  const auto api = capture::cupti::make_cupti_api();
  std::set<uint32_t> contexts;
  for (int r = 0; r < 4; ++r) {
    const auto compute = api->stream_key(gpu->streams(r).compute);
    const auto comm = api->stream_key(gpu->streams(r).comm);
    EXPECT_EQ(compute.context, comm.context) << "rank " << r;
    contexts.insert(compute.context);
  }
  EXPECT_EQ(contexts.size(), 4u);  // CUPTI stream ids alone could collide across them
}

struct Family {
  const char* name;
  schedule::Family family;
  mesh::MeshShape mesh;
  int microbatches;
  int virtual_stages;
};

TEST(CudaVirtualBackend, EveryScheduleFamilyEqualsOneDevice) {
  SKIP_WITHOUT_GPU();
  // The executor tests' deep MLP, wider and on a larger batch.
  model::WorkloadSpec spec = exec::testing::small_mlp_spec(5);
  spec.hidden = 64;
  spec.batch = 32;
  const auto reference = exec::run_reference(spec, 2);
  const Family families[] = {
      {"naive", schedule::Family::kNaive, {1, 4, 1}, 4, 1},
      {"gpipe", schedule::Family::kGpipe, {1, 4, 1}, 4, 1},
      {"1f1b", schedule::Family::kOneFOneB, {1, 4, 1}, 8, 1},
      {"interleaved", schedule::Family::kInterleaved, {1, 2, 1}, 4, 2},
      {"zb-h1", schedule::Family::kZbH1, {1, 4, 1}, 4, 1},
      {"tp", schedule::Family::kTensorParallel, {1, 1, 4}, 2, 1},
      {"dp", schedule::Family::kDataParallel, {4, 1, 1}, 2, 1},
  };
  for (const auto& f : families) {
    exec::RunConfig c;
    c.workload = spec;
    c.schedule = exec::testing::make_schedule(f.family, f.mesh, f.microbatches, f.virtual_stages);
    c.backend = BackendKind::kCudaVirtual;
    c.tracer = capture::TracerKind::kCupti;
    c.steps = 2;
    c.timeout_s = 60;
    const exec::RunResult got = exec::run(c);
    exec::testing::expect_equivalent(got, reference, f.name);
    const auto& md = got.timeline.metadata;
    EXPECT_EQ(md.at("cupti_dropped_records"), "0") << f.name;
    EXPECT_EQ(md.at("cupti_untimed_records"), "0") << f.name;
    // CUPTI recorded the run's GPU work and tied it to its actions.
    EXPECT_GT(std::stoll(md.at("cupti_gpu_ops")), 0) << f.name;
    EXPECT_GT(
        std::stoll(md.at("cupti_ops_by_external_id")) + std::stoll(md.at("cupti_ops_by_nvtx")), 0)
        << f.name;
    EXPECT_GT(std::stoll(md.at("cupti_nvtx_ranges")), 0) << f.name << ": NVTX reached no tool";
  }
}

// The moe workload's routing kernels (kernels/cuda/moe.cu) and its all-to-alls over the virtual
// fabric: expert parallel over 4 replicas, over 2 replicas with a pipeline of 2 stages, and over
// ep groups of 2 of 4 replicas (each expert on two of them, reduced over edp).
TEST(CudaVirtualBackend, MoeWithExpertParallelismEqualsOneDevice) {
  SKIP_WITHOUT_GPU();
  // 4 blocks of h = 32 with 8 experts, batch 64, top-2; capacity factor 0.75: drops.
  model::WorkloadSpec spec = model::testing::small_moe_spec(4, 64, 2, 0.75);
  spec.hidden = 32;
  spec.experts = 8;
  spec.lr = 0.1f;
  spec.seed = 5;
  const std::pair<Family, int> runs[] = {
      {{"dp ep4", schedule::Family::kDataParallel, {4, 1, 1}, 2, 1}, 4},
      {{"1f1b ep2 pp2", schedule::Family::kOneFOneB, {2, 2, 1}, 4, 1}, 2},
      {{"dp4 ep2", schedule::Family::kDataParallel, {4, 1, 1}, 2, 1}, 2},
  };
  for (const auto& [f, ep] : runs) {
    spec.ep = ep;
    exec::RunConfig c;
    c.workload = spec;
    c.schedule =
        exec::testing::make_schedule_for(spec, f.family, f.mesh, f.microbatches, f.virtual_stages);
    c.backend = BackendKind::kCudaVirtual;
    c.steps = 2;
    c.timeout_s = 60;
    const exec::RunResult got = exec::run(c);
    const int rows = model::microbatch_rows(spec.batch, f.mesh.dp, f.microbatches);
    exec::testing::expect_equivalent(got, exec::run_reference(spec, 2, rows), f.name);
  }
}

}  // namespace
}  // namespace meshscope::runtime
