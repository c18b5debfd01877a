// Loss functions: softmax cross-entropy over integer labels and mean squared error.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/cpu/ops.h"

namespace meshscope::kernels::cpu {

double softmax_cross_entropy(int rows, int classes, const float* logits, const int32_t* labels,
                             float scale, float* grad_logits) {
  double total = 0;
  for (int r = 0; r < rows; ++r) {
    const int32_t label = labels[r];
    if (label < 0 || label >= classes) {
      throw std::out_of_range("softmax_cross_entropy: label " + std::to_string(label) + " of row " +
                              std::to_string(r) + " is outside [0, " + std::to_string(classes) +
                              ")");
    }
    const float* z = logits + static_cast<long>(r) * classes;
    float* g = grad_logits + static_cast<long>(r) * classes;
    const float zmax = *std::max_element(z, z + classes);
    double denom = 0;
    for (int c = 0; c < classes; ++c) denom += std::exp(static_cast<double>(z[c] - zmax));
    const double log_denom = std::log(denom);
    total += log_denom - static_cast<double>(z[label] - zmax);
    for (int c = 0; c < classes; ++c) {
      const double p = std::exp(static_cast<double>(z[c] - zmax) - log_denom);
      g[c] = static_cast<float>(scale * (p - (c == label ? 1.0 : 0.0)));
    }
  }
  return scale * total;
}

double mse(size_t n, const float* pred, const float* target, float scale, float* grad) {
  double total = 0;
  for (size_t i = 0; i < n; ++i) {
    const float d = pred[i] - target[i];
    total += static_cast<double>(d) * d;
    grad[i] = scale * 2.0f * d;
  }
  return scale * total;
}

}  // namespace meshscope::kernels::cpu
