// Mixture-of-experts routing: softmax over experts, top-k choice with capacity, dispatch into the
// expert buffer, weighted combine, and their backwards.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cpu/ops.h"

namespace meshscope::kernels::cpu {
namespace {

const float* row(const float* base, int64_t r, int cols) { return base + r * cols; }
float* row(float* base, int64_t r, int cols) { return base + r * cols; }

}  // namespace

void softmax_rows(int rows, int cols, const float* logits, float* probs) {
  for (int r = 0; r < rows; ++r) {
    const float* z = row(logits, r, cols);
    float* p = row(probs, r, cols);
    const float zmax = *std::max_element(z, z + cols);
    double denom = 0;
    for (int c = 0; c < cols; ++c) denom += std::exp(static_cast<double>(z[c] - zmax));
    // Each element is read before it is written: probs may alias logits.
    for (int c = 0; c < cols; ++c)
      p[c] = static_cast<float>(std::exp(static_cast<double>(z[c] - zmax)) / denom);
  }
}

void top_k_route(int tokens, int experts, int k, int capacity, const float* probs, int32_t* dest,
                 float* gate) {
  if (k < 1 || k > experts || capacity < 1) {
    throw std::invalid_argument(
        "top_k_route: needs 1 <= k <= experts and capacity >= 1, got k=" + std::to_string(k) +
        " experts=" + std::to_string(experts) + " capacity=" + std::to_string(capacity));
  }
  // Choices first (dest holds the expert for now), then positions, choice by choice.
  std::vector<char> taken(static_cast<size_t>(experts));
  for (int t = 0; t < tokens; ++t) {
    const float* p = row(probs, t, experts);
    std::fill(taken.begin(), taken.end(), 0);
    for (int j = 0; j < k; ++j) {
      int best = -1;
      for (int e = 0; e < experts; ++e) {
        if (!taken[e] && (best < 0 || p[e] > p[best])) best = e;  // ties: the lower index stays
      }
      taken[best] = 1;
      dest[int64_t{t} * k + j] = best;
      gate[int64_t{t} * k + j] = p[best];
    }
  }
  std::vector<int> used(static_cast<size_t>(experts), 0);
  for (int j = 0; j < k; ++j) {
    for (int t = 0; t < tokens; ++t) {
      int32_t& d = dest[int64_t{t} * k + j];
      const int e = d;
      d = used[e] < capacity ? e * capacity + used[e] : -1;
      ++used[e];
    }
  }
}

void moe_dispatch(int tokens, int k, int cols, int buffer_rows, const float* x, const int32_t* dest,
                  float* buffer) {
  std::fill(buffer, buffer + int64_t{buffer_rows} * cols, 0.0f);
  for (int t = 0; t < tokens; ++t) {
    for (int j = 0; j < k; ++j) {
      const int32_t d = dest[int64_t{t} * k + j];
      if (d >= 0) std::copy_n(row(x, t, cols), cols, row(buffer, d, cols));
    }
  }
}

void moe_combine(int tokens, int k, int cols, const float* buffer, const int32_t* dest,
                 const float* gate, float* y) {
  for (int t = 0; t < tokens; ++t) {
    float* out = row(y, t, cols);
    for (int j = 0; j < k; ++j) {
      const int32_t d = dest[int64_t{t} * k + j];
      if (d < 0) continue;
      const float w = gate != nullptr ? gate[int64_t{t} * k + j] : 1.0f;
      const float* in = row(buffer, d, cols);
      for (int c = 0; c < cols; ++c) out[c] += w * in[c];
    }
  }
}

void moe_combine_backward(int tokens, int k, int cols, int buffer_rows, const float* dy,
                          const float* buffer, const int32_t* dest, const float* gate,
                          float* d_buffer, float* d_gate) {
  std::fill(d_buffer, d_buffer + int64_t{buffer_rows} * cols, 0.0f);
  for (int t = 0; t < tokens; ++t) {
    const float* g = row(dy, t, cols);
    for (int j = 0; j < k; ++j) {
      const int64_t i = int64_t{t} * k + j;
      const int32_t d = dest[i];
      if (d < 0) {
        d_gate[i] = 0.0f;
        continue;
      }
      const float* out = row(buffer, d, cols);
      float* db = row(d_buffer, d, cols);
      double dot = 0;
      for (int c = 0; c < cols; ++c) {
        db[c] = gate[i] * g[c];
        dot += static_cast<double>(g[c]) * out[c];
      }
      d_gate[i] = static_cast<float>(dot);
    }
  }
}

void router_backward(int tokens, int experts, int k, int capacity, const float* probs,
                     const int32_t* dest, const float* d_gate, float* d_logits) {
  for (int t = 0; t < tokens; ++t) {
    const float* p = row(probs, t, experts);
    float* dz = row(d_logits, t, experts);
    std::fill(dz, dz + experts, 0.0f);  // g[t][.], sparse: at most k entries
    double inner = 0;                   // sum_e p[e] g[e]
    for (int j = 0; j < k; ++j) {
      const int32_t d = dest[int64_t{t} * k + j];
      if (d < 0) continue;
      const int e = d / capacity;
      dz[e] = d_gate[int64_t{t} * k + j];
      inner += static_cast<double>(p[e]) * dz[e];
    }
    for (int e = 0; e < experts; ++e)
      dz[e] = static_cast<float>(p[e] * (static_cast<double>(dz[e]) - inner));
  }
}

}  // namespace meshscope::kernels::cpu
