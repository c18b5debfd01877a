// The synthetic Kineto-like trace: per iteration an aten op on the main thread launching a
// kernel (cuda_runtime + ac2g flow), the kernel on stream 7 with Kineto's full args; every 4th
// iteration a runtime call with an orphan flow end (as real Kineto traces have), every 8th a
// memcpy, every 16th an NCCL all-reduce on stream 40; a ProfilerStep#N per 100 iterations.
#include "traces/import/kineto_synth.h"

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <random>

namespace meshscope::traces {
namespace {

constexpr size_t kChunkBytes = size_t{1} << 20;
constexpr int kHostPid = 4242;
constexpr int kMainTid = 4242;
constexpr int kComputeStream = 7;
constexpr int kCommStream = 40;
constexpr int kIterationsPerStep = 100;

constexpr std::array<const char*, 4> kOps = {"aten::linear", "aten::gelu", "aten::add_",
                                             "aten::layer_norm"};
constexpr std::array<const char*, 4> kKernels = {
    "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(Params)",
    "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::"
    "TensorIteratorBase&, at::native::GeluType)::{lambda()#1}::operator()() const::{lambda(float)"
    "#1}, at::detail::Array<char*, 2> >(int, at::native::GeluCUDAKernelImpl)",
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
    "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<"
    "char*, 3>)",
    "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, "
    "float, float const*, float const*, float const*, float*, float*, float*)"};

class Writer {
 public:
  Writer(const SyntheticKinetoOptions& o, const std::function<void(std::string_view)>& sink)
      : o_(o), sink_(sink), rng_(o.seed) {
    buf_.reserve(kChunkBytes + 8192);
  }

  SyntheticKinetoCounts write() {
    header();
    metadata();
    int64_t host_ns = 1'000'000;  // the host clock starts 1 ms into the trace
    int64_t gpu_ns = host_ns;
    int64_t comm_ns = host_ns;
    int64_t step_begin = host_ns;
    for (int64_t i = 0; i < o_.iterations; ++i) {
      iteration(i, host_ns, gpu_ns, comm_ns);
      if ((i + 1) % kIterationsPerStep == 0 || i + 1 == o_.iterations) {
        const int64_t n = i / kIterationsPerStep;
        emit("\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#%" PRId64
             "\", \"pid\": %d, \"tid\": %d,\n    \"ts\": %s, \"dur\": %s,\n    \"args\": {\n"
             "      \"External id\": %" PRId64 "\n    }",
             n, kHostPid, kMainTid, us(step_begin).c_str(), dur(host_ns - step_begin).c_str(),
             next_external_id_++);
        ++counts_.host_spans;
        ++counts_.steps;
        step_begin = host_ns;
      }
    }
    trailer();
    return counts_;
  }

 private:
  void iteration(int64_t i, int64_t& host_ns, int64_t& gpu_ns, int64_t& comm_ns) {
    const int64_t ext = next_external_id_++;
    const int64_t op_begin = host_ns;
    const int64_t op_dur = 30'000 + rand(30'000);
    const auto k = static_cast<size_t>(i % 4);
    emit(
        "\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%s\", \"pid\": %d, \"tid\": %d,\n"
        "    \"ts\": %s, \"dur\": %s,\n    \"args\": {\n      \"External id\": %" PRId64
        ", \"Record function id\": 0, \"Sequence number\": %" PRId64
        ", \"Fwd thread id\": 0\n"
        "    }",
        kOps[k], kHostPid, kMainTid, us(op_begin).c_str(), dur(op_dur).c_str(), ext, i);
    ++counts_.host_spans;
    const int64_t launch_at = op_begin + 5'000;
    gpu_ns = std::max(gpu_ns, launch_at + 6'000);
    const int64_t kernel_dur = 10'000 + rand(190'000);
    launch_kernel(ext, launch_at, gpu_ns, kernel_dur, kKernels[k], kComputeStream);
    gpu_ns += kernel_dur + 1'000 + rand(4'000);
    if (i % 4 == 0) {  // Kineto writes flow ends on runtime calls that launch nothing
      const int64_t corr = next_correlation_++;
      runtime("cudaStreamIsCapturing", ext, corr, op_begin + 15'000, 1'000);
      flow('f', corr, kHostPid, kMainTid, op_begin + 15'000);
    }
    if (i % 8 == 0) memcpy(ext, op_begin + 20'000, gpu_ns);
    if (i % 16 == 15) all_reduce(op_begin + 25'000, comm_ns, gpu_ns);
    host_ns = op_begin + op_dur + 2'000 + rand(3'000);
  }

  void launch_kernel(int64_t ext, int64_t launch_at, int64_t begin, int64_t length,
                     const char* name, int stream, const char* extra_args = "") {
    const int64_t corr = next_correlation_++;
    runtime("cudaLaunchKernel", ext, corr, launch_at, 4'000);
    flow('s', corr, kHostPid, kMainTid, launch_at);
    emit(
        "\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, \"tid\": %d,\n"
        "    \"ts\": %s, \"dur\": %s,\n    \"args\": {\n      \"External id\": %" PRId64
        ",\n      \"queued\": 0, \"device\": 0, \"context\": 1,\n      \"stream\": %d, "
        "\"correlation\": %" PRId64
        ",\n      \"registers per thread\": 128,\n      \"shared memory\": 0,\n      \"blocks "
        "per SM\": 0.5,\n      \"warps per SM\": 2,\n      \"grid\": [216, 1, 1],\n      "
        "\"block\": [128, 1, 1],\n      \"est. achieved occupancy %%\": 6%s\n    }",
        name, stream, us(begin).c_str(), dur(length).c_str(), ext, stream, corr, extra_args);
    flow('f', corr, 0, stream, begin);
    ++counts_.kernels;
    ++counts_.launch_flows;
  }

  void memcpy(int64_t ext, int64_t launch_at, int64_t& gpu_ns) {
    const int64_t corr = next_correlation_++;
    runtime("cudaMemcpyAsync", ext, corr, launch_at, 3'000);
    flow('s', corr, kHostPid, kMainTid, launch_at);
    const int64_t length = 2'000 + rand(8'000);
    emit(
        "\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD (Pinned -> "
        "Device)\", \"pid\": 0, \"tid\": %d,\n    \"ts\": %s, \"dur\": %s,\n    \"args\": {\n"
        "      \"External id\": %" PRId64
        ",\n      \"device\": 0, \"context\": 1,\n      "
        "\"stream\": %d, \"correlation\": %" PRId64
        ",\n      \"bytes\": 1048576, \"memory "
        "bandwidth (GB/s)\": 104.8576\n    }",
        kComputeStream, us(gpu_ns).c_str(), dur(length).c_str(), ext, kComputeStream, corr);
    flow('f', corr, 0, kComputeStream, gpu_ns);
    gpu_ns += length + 1'000;
    ++counts_.memcpys;
    ++counts_.launch_flows;
  }

  void all_reduce(int64_t at, int64_t& comm_ns, int64_t gpu_ns) {
    const int64_t ext = next_external_id_++;
    emit(
        "\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"record_param_comms\", \"pid\": %d, "
        "\"tid\": %d,\n    \"ts\": %s, \"dur\": %s,\n    \"args\": {\n      \"External id\": "
        "%" PRId64
        ", \"Collective name\": \"allreduce\", \"dtype\": \"Float\",\n      \"In msg "
        "nelems\": 4194304, \"Out msg nelems\": 4194304, \"Group size\": %d\n    }",
        kHostPid, kMainTid, us(at).c_str(), dur(9'000).c_str(), ext, o_.world_size);
    ++counts_.host_spans;
    const int64_t begin = std::max(comm_ns, gpu_ns - 50'000);
    const int64_t length = 300'000 + rand(100'000);
    char extra[256];
    std::snprintf(extra, sizeof extra,
                  ",\n      \"Collective name\": \"allreduce\", \"In msg nelems\": 4194304, "
                  "\"Out msg nelems\": 4194304, \"Group size\": %d, \"dtype\": \"Float\"",
                  o_.world_size);
    launch_kernel(ext, at + 2'000, begin, length,
                  "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, "
                  "ncclWork*)",
                  kCommStream, extra);
    comm_ns = begin + length + 2'000;
    ++counts_.nccl_kernels;
  }

  void runtime(const char* name, int64_t ext, int64_t corr, int64_t at, int64_t length) {
    emit(
        "\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"%s\", \"pid\": %d, \"tid\": %d,\n"
        "    \"ts\": %s, \"dur\": %s,\n    \"args\": {\n      \"External id\": %" PRId64
        ", \"cbid\": 211, \"correlation\": %" PRId64 "\n    }",
        name, kHostPid, kMainTid, us(at).c_str(), dur(length).c_str(), ext, corr);
    ++counts_.host_spans;
  }

  void flow(char ph, int64_t id, int pid, int tid, int64_t at) {
    emit("\"ph\": \"%c\", \"id\": %" PRId64
         ", \"pid\": %d, \"tid\": %d, \"ts\": %s,\n"
         "    \"cat\": \"ac2g\", \"name\": \"ac2g\"%s",
         ph, id, pid, tid, us(at).c_str(), ph == 'f' ? ", \"bp\": \"e\"" : "");
  }

  void header() {
    char text[1024];
    std::snprintf(text, sizeof text,
                  "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n    {\n      \"id\": 0, "
                  "\"name\": \"NVIDIA H100 80GB HBM3\", \"totalGlobalMem\": 84929216512,\n      "
                  "\"computeMajor\": 9, \"computeMinor\": 0, \"numSms\": 132\n    }\n  ],\n  "
                  "\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": %d, \"world_size\": "
                  "%d},\n  \"traceEvents\": [",
                  o_.rank, o_.world_size);
    buf_ += text;
  }

  void metadata() {
    emit(
        "\"name\": \"process_name\", \"ph\": \"M\", \"ts\": %s, \"pid\": %d, \"tid\": 0,\n"
        "    \"args\": {\n      \"name\": \"python3\"\n    }",
        us(0).c_str(), kHostPid);
    emit(
        "\"name\": \"thread_name\", \"ph\": \"M\", \"ts\": %s, \"pid\": %d, \"tid\": %d,\n"
        "    \"args\": {\n      \"name\": \"thread %d (python3)\"\n    }",
        us(0).c_str(), kHostPid, kMainTid, kMainTid);
    emit(
        "\"name\": \"process_labels\", \"ph\": \"M\", \"ts\": %s, \"pid\": 0, \"tid\": 0,\n"
        "    \"args\": {\n      \"labels\": \"GPU 0\"\n    }",
        us(0).c_str());
  }

  void trailer() {
    char text[256];
    std::snprintf(text, sizeof text,
                  "\n],\n  \"traceName\": \"synthetic\",\n  \"displayTimeUnit\": \"ms\",\n  "
                  "\"baseTimeNanoseconds\": %" PRId64 "\n}\n",
                  o_.base_time_ns);
    buf_ += text;
    sink_(buf_);
    buf_.clear();
  }

  __attribute__((format(printf, 2, 3))) void emit(const char* fmt, ...) {
    char text[2048];
    va_list ap;
    va_start(ap, fmt);
    const int n = std::vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    buf_ += first_ ? "\n  {\n    " : ",\n  {\n    ";
    first_ = false;
    buf_.append(text, static_cast<size_t>(std::min<int>(n, static_cast<int>(sizeof text) - 1)));
    buf_ += "\n  }";
    ++counts_.events;
    if (buf_.size() >= kChunkBytes) {
      sink_(buf_);
      buf_.clear();
    }
  }

  // Kineto's µs with three decimals, on the (possibly skewed) clock of this rank.
  std::string us(int64_t ns) const { return dur(ns + o_.clock_offset_ns); }
  static std::string dur(int64_t ns) {
    const uint64_t mag =
        ns < 0 ? uint64_t{0} - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
    char text[32];
    std::snprintf(text, sizeof text, "%s%" PRIu64 ".%03" PRIu64, ns < 0 ? "-" : "", mag / 1000,
                  mag % 1000);
    return text;
  }
  int64_t rand(int64_t below) {
    return static_cast<int64_t>(rng_() % static_cast<uint64_t>(below));
  }

  const SyntheticKinetoOptions& o_;
  const std::function<void(std::string_view)>& sink_;
  std::mt19937_64 rng_;
  std::string buf_;
  bool first_ = true;
  int64_t next_external_id_ = 1;
  int64_t next_correlation_ = 1;
  SyntheticKinetoCounts counts_;
};

}  // namespace

SyntheticKinetoCounts write_synthetic_kineto(const SyntheticKinetoOptions& options,
                                             const std::function<void(std::string_view)>& sink) {
  return Writer(options, sink).write();
}

}  // namespace meshscope::traces
