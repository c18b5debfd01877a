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

// --- Mixture-of-experts routing (moe.cpp) ----------------------------------------------------
// A routing group of `tokens` rows is sent to `experts` experts, each with room for `capacity`
// tokens; a token's k choices are numbered j = 0..k-1. `dest[t * k + j]` names the row of the
// dispatch buffer (experts x capacity rows, expert-major) that choice j of token t occupies, or -1
// when the choice was dropped for want of room.

// probs[r][c] = exp(logits[r][c] - max_c) / sum_c (computed in double). probs may alias logits.
void softmax_rows(int rows, int cols, const float* logits, float* probs);

// Top-k routing with expert capacity, as GShard (Lepikhin et al. 2020, Algorithm 1: top-2 gating,
// second choices placed after every first choice) and the Switch Transformer (Fedus et al. 2021,
// section 2.2: positions by a cumulative sum over the tokens, overflow dropped) do:
//   - token t's choices are the k experts of largest probs[t][.], in descending order; equal
//     probabilities go to the lower expert index first;
//   - positions inside an expert are handed out choice by choice (every token's choice 0 in token
//     order, then every token's choice 1, ...); a choice whose position would be >= capacity is
//     dropped (dest -1) and contributes nothing: the token keeps its other choices and, through
//     the block's residual, its input;
//   - dest = expert * capacity + position; gate[t * k + j] = probs[t][expert] (the softmax
//     probability itself, not renormalised over the k choices, as the Switch Transformer's y =
//     p_i(x) E_i(x)), written for dropped choices too;
//   - deterministic: GShard's random dropping of second choices is not done.
// Throws std::invalid_argument unless 1 <= k <= experts and capacity >= 1.
void top_k_route(int tokens, int experts, int k, int capacity, const float* probs, int32_t* dest,
                 float* gate);

// buffer (buffer_rows x cols) = 0, then buffer[dest[t * k + j]] = x[t] for every kept choice.
void moe_dispatch(int tokens, int k, int cols, int buffer_rows, const float* x, const int32_t* dest,
                  float* buffer);

// y[t] += sum over the kept choices j of w * buffer[dest[t * k + j]], w = gate[t * k + j] (gate
// null: 1, the backward of moe_dispatch). Choices are added in order j = 0..k-1.
void moe_combine(int tokens, int k, int cols, const float* buffer, const int32_t* dest,
                 const float* gate, float* y);

// The backward of moe_combine with gates: d_buffer (buffer_rows x cols) = 0, then
// d_buffer[dest[t * k + j]] = gate[t * k + j] * dy[t]; d_gate[t * k + j] = dy[t] . buffer[dest]
// (0 for a dropped choice).
void moe_combine_backward(int tokens, int k, int cols, int buffer_rows, const float* dy,
                          const float* buffer, const int32_t* dest, const float* gate,
                          float* d_buffer, float* d_gate);

// The router's backward through the kept gates and the softmax: with g[t][e] = d_gate[t * k + j]
// for each kept choice (e = dest / capacity) and 0 elsewhere,
// d_logits[t][e] = probs[t][e] * (g[t][e] - sum_e' probs[t][e'] g[t][e']).
void router_backward(int tokens, int experts, int k, int capacity, const float* probs,
                     const int32_t* dest, const float* d_gate, float* d_logits);

}  // namespace cpu
}  // namespace meshscope::kernels
