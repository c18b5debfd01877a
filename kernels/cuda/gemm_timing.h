// How the GEMM rate tools time a list of shapes (gemm_rates.h): each shape warmed up, then
// kBatches batches of calls queued back to back, each batch timed as a whole, the batches taken
// in rounds over all the shapes (so that the GPU's clock drifting as it warms falls on every shape
// alike, not on the last ones); a shape's time is its median batch's time per call.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <vector>

#include "kernels/cuda/check.h"
#include "kernels/cuda/gemm_rates.h"
#include "kernels/cuda/stream_lead.h"

namespace meshscope::kernels::cuda {

inline constexpr int kGemmBatches = 5;

inline double gemm_flops(const GemmShape& s) {
  return 2.0 * static_cast<double>(s.b) * static_cast<double>(s.m) * static_cast<double>(s.n) *
         static_cast<double>(s.k);
}

// Seconds the work `queue` puts on `stream` takes, timed by two CUDA events around it. Calls
// queued back to back and timed together: one call timed alone would also time the host's launch
// of it (several us of cuBLAS on the CPU while the GPU waits), which a training step, whose host
// runs ahead, does not pay; and the stream leads with a spin (stream_lead.h), so that the start
// event does not fire while the host is still launching the first call.
template <typename Queue>
double event_seconds(cudaStream_t stream, cudaEvent_t start, cudaEvent_t stop, Queue&& queue) {
  queue_stream_lead(stream);
  MESHSCOPE_CUDA_CHECK(cudaEventRecord(start, stream));
  queue();
  MESHSCOPE_CUDA_CHECK(cudaEventRecord(stop, stream));
  MESHSCOPE_CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  MESHSCOPE_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  return ms * 1e-3;
}

// `Bench` has run(shape, calls), which queues the calls, and seconds(shape, calls), which queues
// and times them.
template <typename Bench>
std::vector<GemmRate> rates_in_rounds(Bench& bench, const std::vector<GemmShape>& shapes,
                                      int warmup, int iters) {
  for (const GemmShape& s : shapes) bench.run(s, warmup);
  std::vector<std::vector<double>> seconds(shapes.size());
  for (int batch = 0; batch < kGemmBatches; ++batch)
    for (size_t i = 0; i < shapes.size(); ++i)
      seconds[i].push_back(bench.seconds(shapes[i], iters) / iters);
  std::vector<GemmRate> rates;
  for (size_t i = 0; i < shapes.size(); ++i) {
    std::vector<double>& s = seconds[i];
    std::nth_element(s.begin(), s.begin() + s.size() / 2, s.end());
    const double median = s[s.size() / 2];
    rates.push_back({shapes[i], median, median > 0 ? gemm_flops(shapes[i]) / median : 0});
  }
  return rates;
}

}  // namespace meshscope::kernels::cuda
