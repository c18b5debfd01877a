// Transformer Engine's SM margin, measured (sm_margin.h).
#include <cublasLt.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <optional>
#include <stdexcept>

#include "kernels/cuda/lt_gemm.h"
#include "kernels/cuda/raii.h"
#include "kernels/cuda/random_fill.h"
#include "kernels/cuda/sm_margin.h"
#include "kernels/cuda/stream_lead.h"

namespace meshscope::kernels::cuda {
namespace {

// TE's own settings for the pattern (transformer_engine/pytorch/module/base.py and
// comm_gemm_overlap.cpp): at most 3 compute streams (_NUM_MAX_UB_STREAMS), created at priority -1
// like its communication stream; a 32 MiB cuBLAS workspace on Hopper
// (get_cublas_workspace_size_bytes), which split_overlap_rs divides among the compute streams.
constexpr int kMaxStreams = 3;
constexpr int kPriority = -1;
constexpr size_t kWorkspaceBytes = size_t{32} << 20;
constexpr int kBatches = 5;  // timed batches per way; the median is kept

// The flags the holders and the host share, in one small device buffer.
enum Flag : int {
  kStarted = 0,         // holder blocks running
  kRelease = 1,         // set to let them go
  kHolderTimedOut = 2,  // a holder gave up waiting for the release
  kWaitTimedOut = 3,    // the holders did not all start
  kSmIds = 4,           // then each holder's SM id, in start order
};

__device__ uint64_t now_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// One block per SM (launched with all the shared memory a block may have, so that neither a
// second holder nor a GEMM block fits beside it), spinning until released: the SMs a userbuffers
// reduce-scatter holds. Records its SM, so the host can check the holders hold distinct SMs.
// Gives up after 30 s so that a broken run cannot hold the GPU.
__global__ void hold_sms(int* flags) {
  if (threadIdx.x != 0) return;
  unsigned smid;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  const int slot = atomicAdd(&flags[kStarted], 1);
  flags[kSmIds + slot] = static_cast<int>(smid);
  const uint64_t give_up = now_ns() + 30'000'000'000ull;
  while (atomicAdd(&flags[kRelease], 0) == 0) {
    if (now_ns() > give_up) {
      atomicExch(&flags[kHolderTimedOut], 1);
      return;
    }
    __nanosleep(1000);
  }
}

// Waits until `want` holder blocks run (at most 5 s).
__global__ void wait_for_holders(int* flags, int want) {
  const uint64_t give_up = now_ns() + 5'000'000'000ull;
  while (atomicAdd(&flags[kStarted], 0) < want) {
    if (now_ns() > give_up) {
      atomicExch(&flags[kWaitTimedOut], 1);
      return;
    }
    __nanosleep(200);
  }
}

__global__ void release_holders(int* flags) { atomicExch(&flags[kRelease], 1); }

// The holders in clusters of 2 where the GPU has clusters (sm_90 on) and num_sm is even, as TE
// launches its communication kernels (ub_cfg `cga_size`: 2 in every userbuffers file of these
// rows, and TE's default for the pipelined method), so that they take SMs in pairs of one GPC as
// the real kernels would.
void launch_holders(int num_sm, size_t smem, bool clusters, cudaStream_t stream, int* flags) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(static_cast<unsigned>(num_sm));
  cfg.blockDim = dim3(32);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cudaLaunchAttribute cluster[1];
  cluster[0].id = cudaLaunchAttributeClusterDimension;
  cluster[0].val.clusterDim = {2, 1, 1};
  if (clusters && num_sm % 2 == 0) {
    cfg.attrs = cluster;
    cfg.numAttrs = 1;
  }
  MESHSCOPE_CUDA_CHECK(cudaLaunchKernelEx(&cfg, hold_sms, flags));
}

// Releases the holders from the host when a timed run ends early (an exception): the streams
// behind them may be what failed, and a holder left spinning would hold its SM for 30 s.
class HolderGuard {
 public:
  explicit HolderGuard(int* flags) : flags_(flags) {}
  HolderGuard(const HolderGuard&) = delete;
  HolderGuard& operator=(const HolderGuard&) = delete;
  ~HolderGuard() {
    if (flags_ == nullptr) return;
    const int one = 1;  // the legacy stream: ours are non-blocking, so it waits for none of them
    MESHSCOPE_CUDA_WARN(cudaMemcpy(flags_ + kRelease, &one, sizeof one, cudaMemcpyHostToDevice));
  }
  void dismiss() { flags_ = nullptr; }

 private:
  int* flags_;
};

void check_case(const SmMarginCase& c, int sms) {
  const std::string what = "sm margin case '" + c.name + "'";
  constexpr int64_t kMaxDim = 1 << 20;
  if (c.m < 1 || c.n < 1 || c.k < 1 || c.m > kMaxDim || c.n > kMaxDim || c.k > kMaxDim)
    throw std::runtime_error(what + ": m, n and k must be 1 to 2^20");
  if (c.num_splits < 1 || c.num_splits > 64 || c.n % c.num_splits != 0)
    throw std::runtime_error(what + ": num_splits must be 1 to 64 and divide n");
  if (c.num_sm < 1 || c.num_sm > sms - 2)
    throw std::runtime_error(what + ": num_sm must be 1 to the device's " + std::to_string(sms) +
                             " SMs less 2");
  const double bytes = 2.0 * (static_cast<double>(c.n) * c.k + static_cast<double>(c.m) * c.k +
                              static_cast<double>(c.m) * c.n);
  if (bytes > std::ldexp(1.0, 33)) throw std::runtime_error(what + ": operands over 8 GiB");
}

// Runs one case every way: the streams, events, flags and operands it needs.
class Runner {
 public:
  Runner(const SmMarginCase& c, int sms, uint64_t seed)
      : c_(c),
        sms_(sms),
        streams_(std::min(kMaxStreams, c.num_splits)),
        main_(make_stream(kPriority)),
        holder_(make_stream(kPriority)),
        lt_(make_lt()),
        weight_(c.n * c.k),
        input_(c.m * c.k),
        out_(c.m * c.n),
        workspace_(kWorkspaceBytes),
        flags_(kSmIds + static_cast<size_t>(c.num_sm)),
        start_(make_event(true)),
        stop_(make_event(true)),
        fork_(make_event()) {
    const int target = sms - c.num_sm;
    const int64_t chunk = c.n / c.num_splits;
    const size_t chunk_ws = chunk_workspace();
    whole_ = std::make_unique<LtGemm>(lt_.get(), CUDA_R_16BF, c.m, c.n, c.k, 0, kWorkspaceBytes);
    whole_target_ =
        std::make_unique<LtGemm>(lt_.get(), CUDA_R_16BF, c.m, c.n, c.k, target, kWorkspaceBytes);
    chunk_ = std::make_unique<LtGemm>(lt_.get(), CUDA_R_16BF, c.m, chunk, c.k, 0, chunk_ws);
    chunk_target_ =
        std::make_unique<LtGemm>(lt_.get(), CUDA_R_16BF, c.m, chunk, c.k, target, chunk_ws);
    for (int s = 0; s < streams_; ++s) {
      compute_.push_back(make_stream(kPriority));
      join_.push_back(make_event());
    }
    fill_normal_bf16(main_.get(), weight_.data(), weight_.size(), seed);
    fill_normal_bf16(main_.get(), input_.data(), input_.size(), seed + 1);
    int smem = 0;
    MESHSCOPE_CUDA_CHECK(cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
    holder_smem_ = static_cast<size_t>(smem);
    MESHSCOPE_CUDA_CHECK(
        cudaFuncSetAttribute(hold_sms, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    int per_sm = 0;
    MESHSCOPE_CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, hold_sms, 32, holder_smem_));
    if (per_sm != 1)
      throw std::runtime_error("sm margin: " + std::to_string(per_sm) +
                               " SM holders fit on one SM, not 1 (their shared memory, " +
                               std::to_string(holder_smem_) + " bytes, does not fill an SM)");
    int major = 0;
    MESHSCOPE_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
    clusters_ = major >= 9;
    if (clusters_) {  // pairs of holders must fit a GPC, or they run one by one
      cudaLaunchConfig_t cfg{};
      cfg.gridDim = dim3(2);
      cfg.blockDim = dim3(32);
      cfg.dynamicSmemBytes = holder_smem_;
      cudaLaunchAttribute cluster[1];
      cluster[0].id = cudaLaunchAttributeClusterDimension;
      cluster[0].val.clusterDim = {2, 1, 1};
      cfg.attrs = cluster;
      cfg.numAttrs = 1;
      int pairs = 0;
      clusters_ =
          cudaOccupancyMaxActiveClusters(&pairs, hold_sms, &cfg) == cudaSuccess && pairs > 0;
      (void)cudaGetLastError();  // a refusal is an answer here, not an error to keep
    }
    MESHSCOPE_CUDA_CHECK(cudaStreamSynchronize(main_.get()));
  }

  // Seconds per call, the median of kBatches batches of `iters` calls for each way, the ways
  // alternating batch by batch so that clock drift falls on each alike.
  SmMarginTimes measure(int iters) {
    struct Way {
      bool split, target, held;
      double* out;
    };
    SmMarginTimes t;
    t.c = c_;
    t.sms = sms_;
    const std::array<Way, 6> ways = {{{false, false, false, &t.whole},
                                      {false, true, false, &t.whole_target},
                                      {true, false, false, &t.split},
                                      {true, true, false, &t.split_target},
                                      {true, false, true, &t.held},
                                      {true, true, true, &t.held_target}}};
    for (const Way& w : ways) calls(w.split, w.target, 3);  // each plan's first-call setup
    MESHSCOPE_CUDA_CHECK(cudaStreamSynchronize(main_.get()));
    std::array<std::vector<double>, 6> seconds;
    for (int batch = 0; batch < kBatches; ++batch)
      for (size_t i = 0; i < ways.size(); ++i)
        seconds[i].push_back(time(ways[i].split, ways[i].target, ways[i].held, iters) / iters);
    for (size_t i = 0; i < ways.size(); ++i) {
      std::vector<double>& s = seconds[i];
      std::nth_element(s.begin(), s.begin() + s.size() / 2, s.end());
      *ways[i].out = s[s.size() / 2];
    }
    return t;
  }

 private:
  // Each compute stream's share of the workspace, as TE divides it, rounded down to a multiple of
  // 256 bytes (the alignment cuBLAS documents for a workspace: cublasSetWorkspace).
  size_t chunk_workspace() const {
    return kWorkspaceBytes / static_cast<size_t>(streams_) / 256 * 256;
  }

  // `n` calls queued on the main stream: one GEMM, or TE's chunks forked onto the compute
  // streams round-robin and joined back.
  void calls(bool split, bool target, int n) {
    for (int call = 0; call < n; ++call) {
      if (!split) {
        (target ? whole_target_ : whole_)
            ->run(main_.get(), weight_.data(), input_.data(), out_.data(), workspace_.data());
        continue;
      }
      MESHSCOPE_CUDA_CHECK(cudaEventRecord(fork_.get(), main_.get()));
      for (int s = 0; s < streams_; ++s)
        MESHSCOPE_CUDA_CHECK(cudaStreamWaitEvent(compute_[s].get(), fork_.get(), 0));
      const int64_t chunk = c_.n / c_.num_splits;
      const size_t chunk_ws = chunk_workspace();
      for (int i = 0; i < c_.num_splits; ++i) {
        const int s = i % streams_;
        (target ? chunk_target_ : chunk_)
            ->run(compute_[s].get(), weight_.data() + i * chunk * c_.k, input_.data(),
                  out_.data() + i * chunk * c_.m, workspace_.data() + s * chunk_ws);
      }
      for (int s = 0; s < streams_; ++s) {
        MESHSCOPE_CUDA_CHECK(cudaEventRecord(join_[s].get(), compute_[s].get()));
        MESHSCOPE_CUDA_CHECK(cudaStreamWaitEvent(main_.get(), join_[s].get(), 0));
      }
    }
  }

  double time(bool split, bool target, bool held, int n) {
    std::optional<HolderGuard> guard;
    if (held) {
      MESHSCOPE_CUDA_CHECK(cudaMemsetAsync(flags_.data(), 0, flags_.bytes(), main_.get()));
      MESHSCOPE_CUDA_CHECK(cudaEventRecord(fork_.get(), main_.get()));
      MESHSCOPE_CUDA_CHECK(cudaStreamWaitEvent(holder_.get(), fork_.get(), 0));
      // The memset done before a HolderGuard may write the release: it must not clear that.
      MESHSCOPE_CUDA_CHECK(cudaStreamSynchronize(main_.get()));
      guard.emplace(flags_.data());
      launch_holders(c_.num_sm, holder_smem_, clusters_, holder_.get(), flags_.data());
      wait_for_holders<<<1, 32, 0, main_.get()>>>(flags_.data(), c_.num_sm);
      MESHSCOPE_CUDA_CHECK(cudaGetLastError());
    }
    queue_stream_lead(main_.get());  // the host's launch of the first calls is not timed
    MESHSCOPE_CUDA_CHECK(cudaEventRecord(start_.get(), main_.get()));
    calls(split, target, n);
    MESHSCOPE_CUDA_CHECK(cudaEventRecord(stop_.get(), main_.get()));
    if (held) {
      release_holders<<<1, 1, 0, main_.get()>>>(flags_.data());
      MESHSCOPE_CUDA_CHECK(cudaGetLastError());
      MESHSCOPE_CUDA_CHECK(cudaStreamSynchronize(holder_.get()));
      guard->dismiss();
    }
    MESHSCOPE_CUDA_CHECK(cudaEventSynchronize(stop_.get()));
    if (held) check_holders();
    float ms = 0;
    MESHSCOPE_CUDA_CHECK(cudaEventElapsedTime(&ms, start_.get(), stop_.get()));
    return ms * 1e-3;
  }

  // That every holder ran, was released, and held an SM of its own.
  void check_holders() const {
    std::vector<int> host(flags_.size());
    MESHSCOPE_CUDA_CHECK(
        cudaMemcpy(host.data(), flags_.data(), flags_.bytes(), cudaMemcpyDeviceToHost));
    const std::string what = "sm margin case '" + c_.name + "': ";
    if (host[kWaitTimedOut] != 0)
      throw std::runtime_error(what + "only " + std::to_string(host[kStarted]) + " of " +
                               std::to_string(c_.num_sm) + " SM holders ran within 5 s");
    if (host[kHolderTimedOut] != 0)
      throw std::runtime_error(what + "the SM holders were not released within 30 s");
    std::vector<int> sms(host.begin() + kSmIds, host.begin() + kSmIds + c_.num_sm);
    std::sort(sms.begin(), sms.end());
    const auto distinct = std::unique(sms.begin(), sms.end()) - sms.begin();
    if (distinct != c_.num_sm)
      throw std::runtime_error(what + "the " + std::to_string(c_.num_sm) + " SM holders ran on " +
                               std::to_string(distinct) + " SMs");
  }

  SmMarginCase c_;
  int sms_;
  int streams_;
  Stream main_, holder_;
  std::vector<Stream> compute_;
  std::vector<Event> join_;
  LtHandle lt_;
  DeviceBuffer<__nv_bfloat16> weight_, input_, out_;
  DeviceBuffer<std::byte> workspace_;
  DeviceBuffer<int> flags_;
  Event start_, stop_, fork_;
  size_t holder_smem_ = 0;
  bool clusters_ = false;  // the device launches thread-block clusters (compute capability >= 9)
  std::unique_ptr<LtGemm> whole_, whole_target_, chunk_, chunk_target_;
};

}  // namespace

std::vector<SmMarginTimes> measure_sm_margin(const std::vector<SmMarginCase>& cases, int iters,
                                             uint64_t seed) {
  if (cases.empty() || iters < 1) return {};
  int sms = 0;
  MESHSCOPE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  for (const SmMarginCase& c : cases) check_case(c, sms);
  std::vector<SmMarginTimes> times;
  for (const SmMarginCase& c : cases) times.push_back(Runner(c, sms, seed).measure(iters));
  return times;
}

}  // namespace meshscope::kernels::cuda
