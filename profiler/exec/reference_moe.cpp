// A moe block on one device: route, dispatch, every expert's FFN, combine; then the backward.
#include "profiler/exec/reference_moe.h"

#include <stdexcept>

#include "kernels/cpu/ops.h"

namespace meshscope::exec {
namespace {

namespace k = kernels::cpu;

struct Shape {
  int h, f, experts, top_k, capacity, groups, group_rows;
  size_t slots() const { return size_t(experts) * capacity; }  // dispatch rows of one group
};

Shape shape_of(const model::Workload& w, const model::Unit& unit, int rows, int group_rows) {
  if (group_rows < 1 || rows % group_rows != 0) {
    throw std::invalid_argument("reference: " + std::to_string(rows) +
                                " rows do not split into routing groups of " +
                                std::to_string(group_rows));
  }
  return {w.spec.hidden, unit.linears[model::moe_fc1(0)].out,        w.spec.experts,
          w.spec.top_k,  model::expert_capacity(w.spec, group_rows), rows / group_rows,
          group_rows};
}

}  // namespace

void moe_forward(const model::Workload& w, const model::Unit& unit,
                 const model::LinearWeights* params, int rows, int group_rows,
                 const std::vector<float>& x, std::vector<float>& y, MoeTape& t) {
  const Shape s = shape_of(w, unit, rows, group_rows);
  const int E = s.experts, kk = s.top_k, C = s.capacity, h = s.h, f = s.f, G = s.group_rows;
  const model::LinearWeights& router = params[model::kMoeRouter];
  t.x = x;
  t.probs.assign(size_t(rows) * E, 0.0f);
  k::gemm(false, false, rows, E, h, 1.0f, x.data(), h, router.w.data(), E, 0.0f, t.probs.data(), E);
  k::bias_activation_forward(model::Activation::kNone, rows, E, router.b.data(), t.probs.data(),
                             t.probs.data());
  k::softmax_rows(rows, E, t.probs.data(), t.probs.data());
  t.dest.assign(size_t(rows) * kk, 0);
  t.gate.assign(size_t(rows) * kk, 0.0f);
  t.inputs.assign(s.slots() * h * s.groups, 0.0f);
  t.pre.assign(s.slots() * f * s.groups, 0.0f);
  t.hidden.assign(t.pre.size(), 0.0f);
  t.outputs.assign(t.inputs.size(), 0.0f);
  y = x;  // the residual
  for (int g = 0; g < s.groups; ++g) {
    const size_t r0 = size_t(g) * G;
    int32_t* dest = t.dest.data() + r0 * kk;
    float* gate = t.gate.data() + r0 * kk;
    k::top_k_route(G, E, kk, C, t.probs.data() + r0 * E, dest, gate);
    k::moe_dispatch(G, kk, h, E * C, x.data() + r0 * h, dest, t.inputs.data() + g * s.slots() * h);
    for (int e = 0; e < E; ++e) {
      const model::LinearWeights& fc1 = params[model::moe_fc1(e)];
      const model::LinearWeights& fc2 = params[model::moe_fc2(e)];
      const size_t first = g * s.slots() + size_t(e) * C;  // the expert's rows of this group
      float* pre = t.pre.data() + first * f;
      float* hid = t.hidden.data() + first * f;
      float* out = t.outputs.data() + first * h;
      k::gemm(false, false, C, f, h, 1.0f, t.inputs.data() + first * h, h, fc1.w.data(), f, 0.0f,
              pre, f);
      k::bias_activation_forward(unit.linears[model::moe_fc1(e)].act, C, f, fc1.b.data(), pre, hid);
      k::gemm(false, false, C, h, f, 1.0f, hid, f, fc2.w.data(), h, 0.0f, out, h);
      k::bias_activation_forward(model::Activation::kNone, C, h, fc2.b.data(), out, out);
    }
    k::moe_combine(G, kk, h, t.outputs.data() + g * s.slots() * h, dest, gate, y.data() + r0 * h);
  }
}

void moe_backward(const model::Workload& w, const model::Unit& unit,
                  const model::LinearWeights* params, int rows, int group_rows, const MoeTape& t,
                  const std::vector<float>& dy, std::vector<float>& dx,
                  model::LinearWeights* grads) {
  const Shape s = shape_of(w, unit, rows, group_rows);
  const int E = s.experts, kk = s.top_k, C = s.capacity, h = s.h, f = s.f, G = s.group_rows;
  const model::LinearWeights& router = params[model::kMoeRouter];
  std::vector<float> d_out(s.slots() * h), d_in(s.slots() * h), d_hidden(size_t(C) * f);
  std::vector<float> d_gate(size_t(G) * kk), d_logits(size_t(rows) * E);
  dx = dy;  // the residual
  for (int g = 0; g < s.groups; ++g) {
    const size_t r0 = size_t(g) * G;
    const int32_t* dest = t.dest.data() + r0 * kk;
    k::moe_combine_backward(G, kk, h, E * C, dy.data() + r0 * h,
                            t.outputs.data() + g * s.slots() * h, dest, t.gate.data() + r0 * kk,
                            d_out.data(), d_gate.data());
    for (int e = 0; e < E; ++e) {
      const model::LinearWeights& fc1 = params[model::moe_fc1(e)];
      const model::LinearWeights& fc2 = params[model::moe_fc2(e)];
      model::LinearWeights& g1 = grads[model::moe_fc1(e)];
      model::LinearWeights& g2 = grads[model::moe_fc2(e)];
      const size_t first = g * s.slots() + size_t(e) * C;
      const float* dz2 = d_out.data() + size_t(e) * C * h;  // fc2 has no activation
      const float* hid = t.hidden.data() + first * f;
      k::gemm(true, false, f, h, C, 1.0f, hid, f, dz2, h, 1.0f, g2.w.data(), h);
      k::bias_grad(C, h, dz2, 1.0f, g2.b.data());
      k::gemm(false, true, C, f, h, 1.0f, dz2, h, fc2.w.data(), h, 0.0f, d_hidden.data(), f);
      k::activation_backward(unit.linears[model::moe_fc1(e)].act, C, f, t.pre.data() + first * f,
                             d_hidden.data(), d_hidden.data());
      k::gemm(true, false, h, f, C, 1.0f, t.inputs.data() + first * h, h, d_hidden.data(), f, 1.0f,
              g1.w.data(), f);
      k::bias_grad(C, f, d_hidden.data(), 1.0f, g1.b.data());
      k::gemm(false, true, C, h, f, 1.0f, d_hidden.data(), f, fc1.w.data(), f, 0.0f,
              d_in.data() + size_t(e) * C * h, h);
    }
    k::router_backward(G, E, kk, C, t.probs.data() + r0 * E, dest, d_gate.data(),
                       d_logits.data() + r0 * E);
    k::moe_combine(G, kk, h, d_in.data(), dest, nullptr, dx.data() + r0 * h);
  }
  model::LinearWeights& gr = grads[model::kMoeRouter];
  k::gemm(true, false, h, E, rows, 1.0f, t.x.data(), h, d_logits.data(), E, 1.0f, gr.w.data(), E);
  k::bias_grad(rows, E, d_logits.data(), 1.0f, gr.b.data());
  k::gemm(false, true, rows, h, E, 1.0f, d_logits.data(), E, router.w.data(), E, 1.0f, dx.data(),
          h);
}

}  // namespace meshscope::exec
