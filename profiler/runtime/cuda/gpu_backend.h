// What the cuda and cuda-virtual backends expose beyond runtime::Backend: the streams each rank
// issues on, so the CUPTI tracer can put every record on its rank's lane.
#pragma once

#include <cuda_runtime_api.h>

#include <string>
#include <utility>
#include <vector>

#include "profiler/runtime/backend.h"

namespace meshscope::runtime::cuda {

struct RankStreams {
  int gpu = 0;                     // CUDA device ordinal
  cudaStream_t compute = nullptr;  // DeviceOps work
  cudaStream_t comm = nullptr;     // Transport work
  // Further streams the rank's transfers run on, with their lane names ("p2p to rank 3").
  std::vector<std::pair<std::string, cudaStream_t>> extra;
};

class GpuBackend : public Backend {
 public:
  virtual RankStreams streams(int rank) const = 0;
};

}  // namespace meshscope::runtime::cuda
