// The math of a moe block on one rank (see moe_block.h): the reference's steps (reference_moe.cpp)
// on device buffers, with the experts of other ranks reached through all-to-alls.
#include "profiler/exec/moe_block.h"

namespace meshscope::exec {
namespace {

using model::Activation;
constexpr size_t kAlignFloats = 16;  // 64-byte aligned carve-outs

size_t aligned(size_t floats) { return (floats + kAlignFloats - 1) / kAlignFloats * kAlignFloats; }

}  // namespace

MoeBlock::MoeBlock(const StageLayout& stage, const MoeUnitLayout& unit, runtime::DeviceOps& dev)
    : rows_(stage.rows), linears_(stage.linears), m_(unit), dev_(dev) {
  const size_t T = rows_, E = m_.experts, k = m_.top_k, S = m_.slots(), h = m_.hidden, f = m_.ffn;
  const bool ep = m_.ep > 1;
  // probs, gate, inputs, pre, hidden, outputs, combined, d_outputs, d_pre, d_logits
  const size_t sizes[] = {T * E, T * k,          S * h, S * f, S * f,
                          S * h, ep ? S * h : 0, S * h, S * f, T * E};
  size_t per_slot = 0;
  for (size_t n : sizes) per_slot += aligned(n);
  const size_t slots = static_cast<size_t>(stage.microbatches);
  arena_ = runtime::DeviceBuffer(dev_, sizeof(float) * per_slot * slots);
  dest_arena_ = runtime::DeviceBuffer(dev_, sizeof(int32_t) * aligned(T * k) * slots);
  scratch_ = runtime::DeviceBuffer(dev_, sizeof(float) * (2 * aligned(S * h) + aligned(T * k)));
  float* p = arena_.as<float>();
  auto carve = [&p](size_t n) {
    float* q = p;
    p += aligned(n);
    return q;
  };
  for (size_t j = 0; j < slots; ++j) {
    Slot s{};
    s.probs = carve(sizes[0]);
    s.gate = carve(sizes[1]);
    s.inputs = carve(sizes[2]);
    s.pre = carve(sizes[3]);
    s.hidden = carve(sizes[4]);
    s.outputs = carve(sizes[5]);
    s.combined = ep ? carve(sizes[6]) : s.outputs;  // the outputs back on the token side
    s.d_outputs = carve(sizes[7]);
    s.d_pre = carve(sizes[8]);
    s.d_logits = carve(sizes[9]);
    s.dest = dest_arena_.as<int32_t>() + j * aligned(T * k);
    slots_.push_back(s);
  }
  send_ = scratch_.as<float>();
  recv_ = send_ + aligned(S * h);
  d_gate_ = recv_ + aligned(S * h);
}

size_t MoeBlock::block_row(int member, int local) const {
  return (size_t(member) * m_.local_experts + local) * m_.capacity;
}

void MoeBlock::exchange(int inner, const float* send, float* recv, RankContext& ctx) {
  if (inner < 0) return;  // ep = 1: the buffers are one
  run_inner(ctx, inner, [&](mesh::GroupKind group) {
    return ctx.net->all_to_all(group, send, recv, m_.block_floats());
  });
}

void MoeBlock::forward(int mb, const float* x, float* y, const float* params, RankContext& ctx) {
  Slot& s = slots_[mb];
  const int T = rows_, E = m_.experts, k = m_.top_k, C = m_.capacity, h = m_.hidden, f = m_.ffn;
  const bool ep = m_.ep > 1;
  const LinearLayout& router = linears_[m_.router];
  dev_.gemm(false, false, T, E, h, 1.0f, x, h, params + router.w_offset, E, 0.0f, s.probs, E);
  dev_.bias_activation_forward(Activation::kNone, T, E, params + router.b_offset, s.probs, s.probs);
  dev_.softmax_rows(T, E, s.probs, s.probs);
  dev_.top_k_route(T, E, k, C, s.probs, s.dest, s.gate);
  dev_.moe_dispatch(T, k, h, m_.slots(), x, s.dest, ep ? send_ : s.inputs);
  exchange(m_.dispatch_inner, send_, s.inputs, ctx);
  for (int member = 0; member < m_.ep; ++member) {
    for (int l = 0; l < m_.local_experts; ++l) {
      const LinearLayout& fc1 = linears_[m_.fc1(l)];
      const LinearLayout& fc2 = linears_[m_.fc2(l)];
      const size_t r = block_row(member, l);
      dev_.gemm(false, false, C, f, h, 1.0f, s.inputs + r * h, h, params + fc1.w_offset, f, 0.0f,
                s.pre + r * f, f);
      dev_.bias_activation_forward(m_.act, C, f, params + fc1.b_offset, s.pre + r * f,
                                   s.hidden + r * f);
      dev_.gemm(false, false, C, h, f, 1.0f, s.hidden + r * f, f, params + fc2.w_offset, h, 0.0f,
                s.outputs + r * h, h);
      dev_.bias_activation_forward(Activation::kNone, C, h, params + fc2.b_offset,
                                   s.outputs + r * h, s.outputs + r * h);
    }
  }
  exchange(m_.combine_inner, s.outputs, s.combined, ctx);
  dev_.copy(y, x, sizeof(float) * size_t(T) * h);  // the residual
  dev_.moe_combine(T, k, h, s.combined, s.dest, s.gate, y);
}

void MoeBlock::input_grad(int mb, const float* dy, float* dx, const float* params,
                          RankContext& ctx) {
  Slot& s = slots_[mb];
  const int T = rows_, E = m_.experts, k = m_.top_k, C = m_.capacity, h = m_.hidden, f = m_.ffn;
  const bool ep = m_.ep > 1;
  dev_.moe_combine_backward(T, k, h, m_.slots(), dy, s.combined, s.dest, s.gate,
                            ep ? send_ : s.d_outputs, d_gate_);
  exchange(m_.combine_grad_inner, send_, s.d_outputs, ctx);
  // The experts' input gradients land in send_ (expert side), in the blocks' layout.
  for (int member = 0; member < m_.ep; ++member) {
    for (int l = 0; l < m_.local_experts; ++l) {
      const LinearLayout& fc1 = linears_[m_.fc1(l)];
      const LinearLayout& fc2 = linears_[m_.fc2(l)];
      const size_t r = block_row(member, l);
      dev_.gemm(false, true, C, f, h, 1.0f, s.d_outputs + r * h, h, params + fc2.w_offset, h, 0.0f,
                s.d_pre + r * f, f);
      dev_.activation_backward(m_.act, C, f, s.pre + r * f, s.d_pre + r * f, s.d_pre + r * f);
      dev_.gemm(false, true, C, h, f, 1.0f, s.d_pre + r * f, f, params + fc1.w_offset, f, 0.0f,
                send_ + r * h, h);
    }
  }
  exchange(m_.dispatch_grad_inner, send_, recv_, ctx);
  dev_.router_backward(T, E, k, C, s.probs, s.dest, d_gate_, s.d_logits);
  dev_.copy(dx, dy, sizeof(float) * size_t(T) * h);  // the residual
  dev_.moe_combine(T, k, h, ep ? recv_ : send_, s.dest, nullptr, dx);
  const LinearLayout& router = linears_[m_.router];
  dev_.gemm(false, true, T, h, E, 1.0f, s.d_logits, E, params + router.w_offset, E, 1.0f, dx, h);
}

void MoeBlock::weight_grad(int mb, const float* x, float* grads) {
  const Slot& s = slots_[mb];
  const int T = rows_, E = m_.experts, C = m_.capacity, h = m_.hidden, f = m_.ffn;
  const LinearLayout& router = linears_[m_.router];
  dev_.gemm(true, false, h, E, T, 1.0f, x, h, s.d_logits, E, 1.0f, grads + router.w_offset, E);
  dev_.bias_grad(T, E, s.d_logits, 1.0f, grads + router.b_offset);
  for (int member = 0; member < m_.ep; ++member) {
    for (int l = 0; l < m_.local_experts; ++l) {
      const LinearLayout& fc1 = linears_[m_.fc1(l)];
      const LinearLayout& fc2 = linears_[m_.fc2(l)];
      const size_t r = block_row(member, l);
      dev_.gemm(true, false, h, f, C, 1.0f, s.inputs + r * h, h, s.d_pre + r * f, f, 1.0f,
                grads + fc1.w_offset, f);
      dev_.bias_grad(C, f, s.d_pre + r * f, 1.0f, grads + fc1.b_offset);
      dev_.gemm(true, false, f, h, C, 1.0f, s.hidden + r * f, f, s.d_outputs + r * h, h, 1.0f,
                grads + fc2.w_offset, h);
      dev_.bias_grad(C, h, s.d_outputs + r * h, 1.0f, grads + fc2.b_offset);
    }
  }
}

}  // namespace meshscope::exec
