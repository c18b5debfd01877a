// A lead of device work before a timed batch: the stream stays busy for `ns` so that the host has
// queued the batch's first calls before its start event fires; without it, a batch on an idle
// stream times the host's launch of its first call too (a few us of cuBLAS on the CPU: 3 to 5% of
// a 1024^3 GEMM's 20 calls). Used by the GEMM rate tools and the SM-margin measurement.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace meshscope::kernels::cuda {

// 100 us: an order more than the host's launch of a few calls (assumption: cuBLAS launches take
// single us on the host).
inline constexpr uint64_t kStreamLeadNs = 100'000;

// Queues one single-thread kernel that spins for `ns` (the GPU's global timer) on `stream`.
void queue_stream_lead(cudaStream_t stream, uint64_t ns = kStreamLeadNs);

}  // namespace meshscope::kernels::cuda
