// Launch geometry shared by this folder's kernels (included by .cu files only).
#pragma once

#include <algorithm>
#include <cstddef>

namespace meshscope::kernels::cuda::detail {

inline constexpr int kBlock = 256;

// Blocks for a grid-stride loop over n elements: enough to fill an H200 (132 SMs) several times,
// few enough that each thread does several elements.
inline unsigned grid_for(size_t n) {
  const size_t blocks = (n + kBlock - 1) / kBlock;
  return static_cast<unsigned>(std::clamp<size_t>(blocks, 1, 4096));
}

}  // namespace meshscope::kernels::cuda::detail
