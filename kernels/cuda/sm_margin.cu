// Transformer Engine's SM margin, measured (sm_margin.h).
#include <cublasLt.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "kernels/cuda/raii.h"
#include "kernels/cuda/random_fill.h"
#include "kernels/cuda/sm_margin.h"

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

// flags[0]: holder blocks started; flags[1]: release; flags[2]: a wait timed out.
__device__ uint64_t now_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// One block per SM (launched with all the shared memory a block may have, so that neither a
// second holder nor a GEMM block fits beside it), spinning until released: the SMs a userbuffers
// reduce-scatter holds. Gives up after 30 s so that a broken run cannot hold the GPU.
__global__ void hold_sms(int* flags) {
  if (threadIdx.x != 0) return;
  atomicAdd(&flags[0], 1);
  const uint64_t give_up = now_ns() + 30'000'000'000ull;
  while (atomicAdd(&flags[1], 0) == 0) {
    if (now_ns() > give_up) {
      atomicExch(&flags[2], 1);
      return;
    }
    __nanosleep(1000);
  }
}

// Waits until `want` holder blocks run (at most 5 s).
__global__ void wait_for_holders(int* flags, int want) {
  const uint64_t give_up = now_ns() + 5'000'000'000ull;
  while (atomicAdd(&flags[0], 0) < want) {
    if (now_ns() > give_up) {
      atomicExch(&flags[2], 2);
      return;
    }
    __nanosleep(200);
  }
}

__global__ void release_holders(int* flags) { atomicExch(&flags[1], 1); }

struct LtRelease {
  void operator()(cublasLtHandle_t h) const noexcept { cublasLtDestroy(h); }
};
struct DescRelease {
  void operator()(cublasLtMatmulDesc_t d) const noexcept { cublasLtMatmulDescDestroy(d); }
};
struct LayoutRelease {
  void operator()(cublasLtMatrixLayout_t l) const noexcept { cublasLtMatrixLayoutDestroy(l); }
};
struct PrefRelease {
  void operator()(cublasLtMatmulPreference_t p) const noexcept {
    cublasLtMatmulPreferenceDestroy(p);
  }
};
using LtHandle = UniqueHandle<cublasLtHandle_t, LtRelease>;
using Desc = UniqueHandle<cublasLtMatmulDesc_t, DescRelease>;
using Layout = UniqueHandle<cublasLtMatrixLayout_t, LayoutRelease>;
using Pref = UniqueHandle<cublasLtMatmulPreference_t, PrefRelease>;

Layout bf16_layout(int64_t rows, int64_t cols) {
  cublasLtMatrixLayout_t l = nullptr;
  MESHSCOPE_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&l, CUDA_R_16BF, static_cast<uint64_t>(rows),
                                                    static_cast<uint64_t>(cols), rows));
  return Layout(l);
}

// A row-parallel linear's forward as TE calls cuBLASLt for it (nvte_cublas_gemm, TN): the weight
// [n, k] row-major transposed, times the input [m, k] row-major, into [m, n] row-major; bf16 with
// fp32 accumulation; with an SM count target when `sm_target` > 0 (TE's _math_sms).
class LtGemm {
 public:
  LtGemm(cublasLtHandle_t lt, int64_t m, int64_t n, int64_t k, int sm_target, size_t workspace)
      : lt_(lt),
        a_(bf16_layout(k, n)),
        b_(bf16_layout(k, m)),
        d_(bf16_layout(n, m)),
        workspace_(workspace) {
    cublasLtMatmulDesc_t desc = nullptr;
    MESHSCOPE_CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    desc_ = Desc(desc);
    const cublasOperation_t t = CUBLAS_OP_T, nt = CUBLAS_OP_N;
    MESHSCOPE_CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t));
    MESHSCOPE_CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &nt, sizeof nt));
    if (sm_target > 0) {
      const int32_t sms = sm_target;
      MESHSCOPE_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
          desc, CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, &sms, sizeof sms));
    }
    cublasLtMatmulPreference_t pref = nullptr;
    MESHSCOPE_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    Pref owner(pref);
    const uint64_t bytes = workspace;
    MESHSCOPE_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &bytes, sizeof bytes));
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    MESHSCOPE_CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(lt, desc, a_.get(), b_.get(), d_.get(),
                                                          d_.get(), pref, 1, &result, &found));
    if (found < 1)
      throw std::runtime_error("cuBLASLt has no algorithm for a " + std::to_string(m) + " x " +
                               std::to_string(n) + " x " + std::to_string(k) + " bf16 GEMM");
    algo_ = result.algo;
  }

  void run(cudaStream_t stream, const __nv_bfloat16* weight, const __nv_bfloat16* input,
           __nv_bfloat16* out, void* workspace) const {
    const float alpha = 1, beta = 0;
    MESHSCOPE_CUBLAS_CHECK(cublasLtMatmul(lt_, desc_.get(), &alpha, weight, a_.get(), input,
                                          b_.get(), &beta, out, d_.get(), out, d_.get(), &algo_,
                                          workspace, workspace_, stream));
  }

 private:
  cublasLtHandle_t lt_;
  Desc desc_;
  Layout a_, b_, d_;
  cublasLtMatmulAlgo_t algo_{};
  size_t workspace_;
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
        flags_(3),
        start_(make_event(true)),
        stop_(make_event(true)),
        fork_(make_event()) {
    const int target = sms - c.num_sm;
    const int64_t chunk = c.n / c.num_splits;
    const size_t chunk_ws = chunk_workspace();
    whole_ = std::make_unique<LtGemm>(lt_.get(), c.m, c.n, c.k, 0, kWorkspaceBytes);
    whole_target_ = std::make_unique<LtGemm>(lt_.get(), c.m, c.n, c.k, target, kWorkspaceBytes);
    chunk_ = std::make_unique<LtGemm>(lt_.get(), c.m, chunk, c.k, 0, chunk_ws);
    chunk_target_ = std::make_unique<LtGemm>(lt_.get(), c.m, chunk, c.k, target, chunk_ws);
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

  static LtHandle make_lt() {
    cublasLtHandle_t h = nullptr;
    MESHSCOPE_CUBLAS_CHECK(cublasLtCreate(&h));
    return LtHandle(h);
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
    if (held) {
      MESHSCOPE_CUDA_CHECK(cudaMemsetAsync(flags_.data(), 0, 3 * sizeof(int), main_.get()));
      MESHSCOPE_CUDA_CHECK(cudaEventRecord(fork_.get(), main_.get()));
      MESHSCOPE_CUDA_CHECK(cudaStreamWaitEvent(holder_.get(), fork_.get(), 0));
      hold_sms<<<c_.num_sm, 32, holder_smem_, holder_.get()>>>(flags_.data());
      MESHSCOPE_CUDA_CHECK(cudaGetLastError());
      wait_for_holders<<<1, 32, 0, main_.get()>>>(flags_.data(), c_.num_sm);
      MESHSCOPE_CUDA_CHECK(cudaGetLastError());
    }
    try {
      MESHSCOPE_CUDA_CHECK(cudaEventRecord(start_.get(), main_.get()));
      calls(split, target, n);
      MESHSCOPE_CUDA_CHECK(cudaEventRecord(stop_.get(), main_.get()));
    } catch (...) {
      if (held) {  // release them from the host: the streams behind them may be what failed
        const int one = 1;
        MESHSCOPE_CUDA_WARN(
            cudaMemcpy(flags_.data() + 1, &one, sizeof one, cudaMemcpyHostToDevice));
      }
      throw;
    }
    if (held) {
      release_holders<<<1, 1, 0, main_.get()>>>(flags_.data());
      MESHSCOPE_CUDA_CHECK(cudaGetLastError());
      MESHSCOPE_CUDA_CHECK(cudaStreamSynchronize(holder_.get()));
    }
    MESHSCOPE_CUDA_CHECK(cudaEventSynchronize(stop_.get()));
    if (held) {
      int timed_out = 0;
      MESHSCOPE_CUDA_CHECK(
          cudaMemcpy(&timed_out, flags_.data() + 2, sizeof timed_out, cudaMemcpyDeviceToHost));
      if (timed_out != 0)
        throw std::runtime_error("sm margin case '" + c_.name + "': " +
                                 (timed_out == 2 ? "the SM holders never all ran"
                                                 : "the SM holders were never released"));
    }
    float ms = 0;
    MESHSCOPE_CUDA_CHECK(cudaEventElapsedTime(&ms, start_.get(), stop_.get()));
    return ms * 1e-3;
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

std::vector<SmMarginCase> read_sm_margin_cases(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec) ||
      std::filesystem::file_size(path, ec) > (uintmax_t{1} << 20))
    throw std::runtime_error(path + ": not a regular file of at most 1 MiB");
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open");
  std::vector<SmMarginCase> cases;
  std::string text;
  bool header = false;
  for (int line = 1; std::getline(in, text); ++line) {
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (text.empty() || text[0] == '#') continue;
    const std::string where = path + ":" + std::to_string(line) + ": ";
    if (!header) {
      if (text.rfind("name,m,n,k,num_sm,num_splits", 0) != 0)
        throw std::runtime_error(where + "want a header starting 'name,m,n,k,num_sm,num_splits'");
      header = true;
      continue;
    }
    SmMarginCase c;
    const size_t comma = text.find(',');
    c.name = text.substr(0, comma);
    std::string rest = comma == std::string::npos ? "" : text.substr(comma + 1);
    std::replace(rest.begin(), rest.end(), ',', ' ');
    std::istringstream s(rest);
    s >> c.m >> c.n >> c.k >> c.num_sm >> c.num_splits;
    if (c.name.empty() || s.fail() || c.m < 1 || c.n < 1 || c.k < 1 || c.num_sm < 1 ||
        c.num_splits < 1)
      throw std::runtime_error(where + "want a name and m,n,k,num_sm,num_splits of 1 or more");
    if (c.n % c.num_splits != 0)
      throw std::runtime_error(where + "num_splits " + std::to_string(c.num_splits) +
                               " does not divide n " + std::to_string(c.n));
    cases.push_back(c);
  }
  if (cases.empty()) throw std::runtime_error(path + ": no cases");
  return cases;
}

std::string format_sm_margin(const std::vector<SmMarginTimes>& times) {
  std::string out =
      "name,m,n,k,num_sm,num_splits,sms,whole_s,whole_target_s,split_s,split_target_s,held_s,"
      "held_target_s\n";
  char line[512];
  for (const SmMarginTimes& t : times) {
    std::snprintf(line, sizeof line, "%s,%lld,%lld,%lld,%d,%d,%d,%.6e,%.6e,%.6e,%.6e,%.6e,%.6e\n",
                  t.c.name.c_str(), static_cast<long long>(t.c.m), static_cast<long long>(t.c.n),
                  static_cast<long long>(t.c.k), t.c.num_sm, t.c.num_splits, t.sms, t.whole,
                  t.whole_target, t.split, t.split_target, t.held, t.held_target);
    out += line;
  }
  return out;
}

}  // namespace meshscope::kernels::cuda
