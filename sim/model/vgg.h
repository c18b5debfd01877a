// A VGG-style convolution stack (VGG-16 by default: 13 3x3 convolutions in five blocks with max
// pooling, then three fully connected layers), the seed's model-parallel example, split into
// pipeline stages of balanced forward FLOPs.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/model/stage_cost.h"

namespace meshscope::model {

struct VggSpec {
  int64_t image = 224;  // square input, pixels per side
  int64_t in_channels = 3;
  int64_t classes = 1000;
  // Output channels of each 3x3 convolution; 0 is a 2x2 max pool (VGG-16's configuration "D").
  std::vector<int64_t> convs = {64, 64,  0,   128, 128, 0,   256, 256, 256,
                                0,  512, 512, 512, 0,   512, 512, 512, 0};
  std::vector<int64_t> fc = {4096, 4096};
};

struct VggModel {
  std::vector<StageCost> stages;
  double model_flops_per_microbatch = 0;  // forward + backward
  int64_t total_parameters = 0;
};

// Throws std::invalid_argument when the stack has fewer layers than stages or pools below 1 pixel.
VggModel build_vgg(const VggSpec& spec, int64_t micro_batch, int num_stages, int element_bytes);

}  // namespace meshscope::model
