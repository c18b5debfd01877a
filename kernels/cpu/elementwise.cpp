// Elementwise and reduction ops: bias + activation, their backward, bias gradient, SGD, axpy, sum.
#include <cmath>
#include <stdexcept>

#include "kernels/cpu/ops.h"

namespace meshscope::kernels::cpu {
namespace {

constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kGeluCubic = 0.044715f;

inline float activate(Activation act, float x) {
  switch (act) {
    case Activation::kNone:
      return x;
    case Activation::kRelu:
      return x > 0.0f ? x : 0.0f;
    case Activation::kGelu: {
      const float u = kSqrt2OverPi * (x + kGeluCubic * x * x * x);
      return 0.5f * x * (1.0f + std::tanh(u));
    }
  }
  return x;
}

inline float derivative(Activation act, float x) {
  switch (act) {
    case Activation::kNone:
      return 1.0f;
    case Activation::kRelu:
      return x > 0.0f ? 1.0f : 0.0f;
    case Activation::kGelu: {
      const float u = kSqrt2OverPi * (x + kGeluCubic * x * x * x);
      const float t = std::tanh(u);
      const float du = kSqrt2OverPi * (1.0f + 3.0f * kGeluCubic * x * x);
      return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * du;
    }
  }
  return 1.0f;
}

}  // namespace

void bias_activation_forward(Activation act, int rows, int cols, const float* bias, float* pre,
                             float* out) {
  for (int r = 0; r < rows; ++r) {
    float* p = pre + static_cast<long>(r) * cols;
    float* o = out + static_cast<long>(r) * cols;
    if (bias != nullptr) {
      for (int c = 0; c < cols; ++c) p[c] += bias[c];
    }
    if (act == Activation::kNone) {
      if (o != p) {
        for (int c = 0; c < cols; ++c) o[c] = p[c];
      }
    } else {
      for (int c = 0; c < cols; ++c) o[c] = activate(act, p[c]);
    }
  }
}

void activation_backward(Activation act, int rows, int cols, const float* pre,
                         const float* grad_out, float* grad_pre) {
  const long n = static_cast<long>(rows) * cols;
  if (act == Activation::kNone) {
    if (grad_pre != grad_out) {
      for (long i = 0; i < n; ++i) grad_pre[i] = grad_out[i];
    }
    return;
  }
  for (long i = 0; i < n; ++i) grad_pre[i] = grad_out[i] * derivative(act, pre[i]);
}

void bias_grad(int rows, int cols, const float* grad, float beta, float* db) {
  if (beta == 0.0f) {
    for (int c = 0; c < cols; ++c) db[c] = 0.0f;
  } else if (beta != 1.0f) {
    for (int c = 0; c < cols; ++c) db[c] *= beta;
  }
  for (int r = 0; r < rows; ++r) {
    const float* g = grad + static_cast<long>(r) * cols;
    for (int c = 0; c < cols; ++c) db[c] += g[c];
  }
}

void sgd(size_t n, float lr, float* param, const float* grad) {
  for (size_t i = 0; i < n; ++i) param[i] -= lr * grad[i];
}

void axpy(size_t n, float alpha, const float* x, float* y) {
  for (size_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

void sum(size_t n, const float* const* inputs, int num_inputs, float* out) {
  if (num_inputs < 1) throw std::invalid_argument("sum: needs at least one input");
  for (size_t i = 0; i < n; ++i) {
    float s = inputs[0][i];  // read before out[i] is written: out may alias inputs[0]
    for (int j = 1; j < num_inputs; ++j) s += inputs[j][i];
    out[i] = s;
  }
}

void fill(size_t n, float value, float* x) {
  for (size_t i = 0; i < n; ++i) x[i] = value;
}

}  // namespace meshscope::kernels::cpu
