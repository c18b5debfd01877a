// Reference float32 ops on the CPU. The executor's math on the cpu backend, and the oracle the
// CUDA kernels (kernels/cuda) are checked against: kernels/cuda offers the same ops with the same
// contracts. All matrices are row-major and dense; `ld*` is the row stride in elements.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/activation.h"

namespace meshscope::kernels {

namespace cpu {

// C[m x n] = alpha * op(A) * op(B) + beta * C, op(X) = X or X^T.
// op(A) is m x k, op(B) is k x n. beta == 0 overwrites C (NaNs in C do not propagate).
void gemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda,
          const float* b, int ldb, float beta, float* c, int ldc);

// pre[r][c] += bias[c]; out[r][c] = act(pre[r][c]). `bias` may be null (no bias).
// `pre` keeps the pre-activation for the backward; out may alias pre when act is kNone.
void bias_activation_forward(Activation act, int rows, int cols, const float* bias, float* pre,
                             float* out);

// grad_pre = grad_out * act'(pre), elementwise over rows x cols. grad_pre may alias grad_out.
void activation_backward(Activation act, int rows, int cols, const float* pre,
                         const float* grad_out, float* grad_pre);

// db[c] = beta * db[c] + sum_r grad[r][c].
void bias_grad(int rows, int cols, const float* grad, float beta, float* db);

// Softmax cross-entropy over `rows` samples of `classes` logits with integer labels.
// Returns scale * sum_r loss_r, and writes grad_logits = scale * (softmax - onehot).
// A label outside [0, classes) is a programming error (checked, throws std::out_of_range).
double softmax_cross_entropy(int rows, int classes, const float* logits, const int32_t* labels,
                             float scale, float* grad_logits);

// Mean squared error: returns scale * sum (pred - target)^2 and writes
// grad = scale * 2 * (pred - target), over n elements.
double mse(size_t n, const float* pred, const float* target, float scale, float* grad);

// param -= lr * grad.
void sgd(size_t n, float lr, float* param, const float* grad);

// y = alpha * x + y.
void axpy(size_t n, float alpha, const float* x, float* y);

// out = sum_i inputs[i], elementwise over n (out may alias inputs[0]); the reduction behind
// collectives among local ranks.
void sum(size_t n, const float* const* inputs, int num_inputs, float* out);

void fill(size_t n, float value, float* x);

}  // namespace cpu
}  // namespace meshscope::kernels
