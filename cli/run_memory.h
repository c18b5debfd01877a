// How much host memory a `meshscope run` will take, judged from its flags before anything is
// allocated, so an absurd --layers or --hidden is refused with the estimate instead of ending in
// std::bad_alloc or the OOM killer minutes later.
#pragma once

#include <cstdint>

#include "sim/model/workload.h"

namespace meshscope::cli {

struct RunMemoryEstimate {
  double model_bytes = 0;   // the layer list and each rank's tensor bookkeeping (see below)
  double weight_bytes = 0;  // weights and gradients: every replica, the initial and result copies
  double activation_bytes = 0;  // saved activations of one whole batch (and again for the check)
  double data_bytes = 0;        // every step's inputs and targets
  double total() const { return model_bytes + weight_bytes + activation_bytes + data_bytes; }
};

// Closed form from the workload's shapes (sim/model/workload.h): mlp blocks h -> 4h -> h hold
// 8h^2 + 5h parameters; each parameter is held (4 + 2 dp) times as float32 (each replica's
// weights and gradients), 2 + dp more with the check against one device (its weights and
// gradients, and each replica's final copy, compared); each sample keeps about 10h floats per block
// for backward (fc1 input, fc1 pre- and post-activation, fc2 output: h + 4h + 4h + h). A moe
// block's count is in run_memory.cpp, from the buffers profiler/exec/moe_block.cpp holds.
// Bookkeeping: each of the dp x tp copies of a block's tensors costs about 4.5 KB, plus 0.55 KB for
// each microbatch in a step (tensor records, saved-activation lists, allocator headers), whatever
// the block's width. Measured by peak RSS (`/usr/bin/time -f %M meshscope run --hidden 1 --steps 1
// --layers 50000` with -m/--batch 4..32, --tp 2 and 4, --dp 4; docs/BENCHMARKS.md, "run's memory
// estimate") and rounded up: at --hidden 1 it is most of a run's memory (9.8 KB a block at the
// defaults), at widths of 64 and more a small part. Figures are estimates within a small factor;
// they only need to tell a run that fits from one that cannot.
RunMemoryEstimate estimate_run_memory(const model::WorkloadSpec& spec, int dp, int tp,
                                      int microbatches, int steps, bool check);

// Throws UserError "this run needs about 33.0 TiB (...), more than the 19.5 GiB of memory
// available: ..." when the estimate exceeds what is available.
void check_run_fits_in_memory(const model::WorkloadSpec& spec, int dp, int tp, int microbatches,
                              int steps, bool check);

// Throws UserError when `ranks` rank threads (one per rank: the backends of one process) are more
// than this machine lets one process start: the smallest of kernel.pid_max, kernel.threads-max
// and ulimit -u (not for root, which the kernel does not hold to it). Set-up grows with the ranks,
// so finding out from the failed thread start took minutes and gigabytes (dp = 32768: 86 s, 13.5 GB
// here); a million ranks never got that far.
void check_rank_threads_can_start(int64_t ranks);

}  // namespace meshscope::cli
