// Test inputs for the kernel tests: n floats drawn uniformly from [lo, hi) by a seeded generator.
#pragma once

#include <cstddef>
#include <random>
#include <vector>

namespace meshscope::kernels::testing {

inline std::vector<float> uniform_vector(size_t n, unsigned seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

}  // namespace meshscope::kernels::testing
