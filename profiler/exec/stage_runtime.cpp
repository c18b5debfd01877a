// The math of a stage: Megatron-style tensor parallelism inside F and I, moe blocks with their
// expert-parallel all-to-alls (moe_block.h), gradient accumulation over microbatches in W, SGD in
// STEP.
#include "profiler/exec/stage_runtime.h"

#include <stdexcept>

namespace meshscope::exec {
namespace {

constexpr size_t kAlignFloats = 16;  // 64-byte aligned carve-outs

size_t aligned(size_t floats) { return (floats + kAlignFloats - 1) / kAlignFloats * kAlignFloats; }

}  // namespace

StageRuntime::StageRuntime(const StageLayout& layout, runtime::DeviceOps& dev)
    : layout_(layout), dev_(dev) {
  const size_t params_bytes = sizeof(float) * std::max<size_t>(layout_.param_count, 1);
  params_ = runtime::DeviceBuffer(dev_, params_bytes);
  grads_ = runtime::DeviceBuffer(dev_, params_bytes);
  const size_t rows = layout_.rows;
  // Which linears are a moe block's: their tensors live in the block (moe_block.h), the stage
  // keeps only the block's input gradient (as its router's dx) and output.
  std::vector<bool> in_moe(layout_.linears.size(), false), has_dx(layout_.linears.size(), true);
  for (const UnitLayout& u : layout_.units) {
    for (int i = u.first_linear; u.moe >= 0 && i < u.first_linear + u.num_linears; ++i) {
      in_moe[i] = true;
      has_dx[i] = i == u.first_linear;
    }
  }
  // Sizes first (one allocation for every slot), then carve.
  size_t per_slot = aligned(rows * layout_.input_dim) + aligned(rows * layout_.output_dim);
  for (size_t i = 0; i < layout_.linears.size(); ++i) {
    const LinearLayout& l = layout_.linears[i];
    if (!in_moe[i]) per_slot += aligned(rows * l.out) * (l.act == model::Activation::kNone ? 1 : 3);
    if (has_dx[i]) per_slot += aligned(rows * l.in);
  }
  for (const UnitLayout& u : layout_.units) {
    if (u.residual)
      per_slot += aligned(rows * layout_.linears[u.first_linear + u.num_linears - 1].out);
  }
  arena_ = runtime::DeviceBuffer(dev_, sizeof(float) * per_slot * layout_.microbatches);
  slots_.resize(layout_.microbatches);
  for (Slot& s : slots_) {
    s.input = carve(rows * layout_.input_dim);
    s.grad_output = carve(rows * layout_.output_dim);
    for (size_t i = 0; i < layout_.linears.size(); ++i) {
      const LinearLayout& l = layout_.linears[i];
      const bool act = l.act != model::Activation::kNone && !in_moe[i];
      s.z.push_back(in_moe[i] ? nullptr : carve(rows * l.out));
      s.a.push_back(act ? carve(rows * l.out) : s.z.back());
      s.dz.push_back(act ? carve(rows * l.out) : nullptr);
      s.dx.push_back(has_dx[i] ? carve(rows * l.in) : nullptr);
    }
    for (const UnitLayout& u : layout_.units) {
      const int last = u.first_linear + u.num_linears - 1;
      s.y.push_back(u.residual ? carve(rows * layout_.linears[last].out) : s.a[last]);
    }
  }
  for (const UnitLayout& u : layout_.units) {
    moe_.push_back(u.moe >= 0 ? std::make_unique<MoeBlock>(layout_, layout_.moe[u.moe], dev_)
                              : nullptr);
  }
  dev_.zero(grads_.get(), grads_.bytes());
  if (layout_.exchange_floats > 0) {
    exchange_send_ = runtime::DeviceBuffer(dev_, sizeof(float) * layout_.exchange_floats);
    exchange_recv_ = runtime::DeviceBuffer(dev_, sizeof(float) * layout_.exchange_floats);
    dev_.zero(exchange_send_.get(), exchange_send_.bytes());
  }
}

float* StageRuntime::carve(size_t floats) {
  float* p = arena_.as<float>() + arena_used_;
  arena_used_ += aligned(floats);
  return p;
}

void StageRuntime::load_weights(const std::vector<model::LinearWeights>& full) {
  float* p = params_.as<float>();
  for (const LinearLayout& l : layout_.linears) {
    const model::LinearWeights part =
        model::shard(full.at(l.global_index), l.split, layout_.tp_rank, layout_.tp);
    if (part.w.size() != size_t(l.in) * l.out || part.b.size() != size_t(l.bias)) {
      throw std::logic_error("stage " + std::to_string(layout_.stage) + ": shard of " +
                             full[l.global_index].name + " has the wrong shape");
    }
    dev_.upload(p + l.w_offset, part.w.data(), part.w.size() * sizeof(float));
    dev_.upload(p + l.b_offset, part.b.data(), part.b.size() * sizeof(float));
  }
}

std::vector<model::LinearWeights> StageRuntime::download_weights(
    const std::vector<model::LinearWeights>& like) {
  std::vector<model::LinearWeights> out;
  const float* p = params_.as<float>();
  for (const LinearLayout& l : layout_.linears) {
    model::LinearWeights part{like.at(l.global_index).name, l.in, l.out,
                              std::vector<float>(size_t(l.in) * l.out), std::vector<float>(l.bias)};
    dev_.download(part.w.data(), p + l.w_offset, part.w.size() * sizeof(float));
    dev_.download(part.b.data(), p + l.b_offset, part.b.size() * sizeof(float));
    out.push_back(std::move(part));
  }
  return out;
}

void StageRuntime::bind_data(const float* inputs) {
  for (int j = 0; j < layout_.microbatches; ++j) {
    slots_[j].input = const_cast<float*>(inputs) + size_t(j) * layout_.rows * layout_.input_dim;
  }
}

void StageRuntime::bind_targets(const float* targets, const int32_t* labels) {
  for (int j = 0; j < layout_.microbatches; ++j) {
    if (targets != nullptr)
      slots_[j].targets = targets + size_t(j) * layout_.rows * layout_.output_dim;
    if (labels != nullptr) slots_[j].labels = labels + size_t(j) * layout_.rows;
  }
}

void StageRuntime::link_previous(StageRuntime& prev) {
  if (prev.layout_.output_dim != layout_.input_dim || prev.layout_.rows != layout_.rows) {
    throw std::logic_error("stages " + std::to_string(prev.layout_.stage) + " and " +
                           std::to_string(layout_.stage) + " do not fit together");
  }
  for (int j = 0; j < layout_.microbatches; ++j) {
    slots_[j].input = prev.output(j);
    prev.slots_[j].grad_output = grad_input(j);
  }
}

// --- where each tensor of the chain rule lives --------------------------------------------------

const float* StageRuntime::unit_input(const Slot& s, int unit) const {
  return unit == 0 ? s.input : s.y[unit - 1];
}

const float* StageRuntime::linear_input(const Slot& s, int unit, int linear) const {
  const UnitLayout& u = layout_.units[unit];
  return linear == u.first_linear ? unit_input(s, unit) : s.a[linear - 1];
}

float* StageRuntime::unit_output_grad(const Slot& s, int unit) const {
  return unit + 1 == static_cast<int>(layout_.units.size())
             ? s.grad_output
             : s.dx[layout_.units[unit + 1].first_linear];
}

float* StageRuntime::linear_output_grad(const Slot& s, int unit, int linear) const {
  const UnitLayout& u = layout_.units[unit];
  return linear == u.first_linear + u.num_linears - 1 ? unit_output_grad(s, unit)
                                                      : s.dx[linear + 1];
}

float* StageRuntime::pre_activation_grad(const Slot& s, int unit, int linear) const {
  return s.dz[linear] != nullptr ? s.dz[linear] : linear_output_grad(s, unit, linear);
}

void StageRuntime::tp_all_reduce(int inner, float* data, size_t count, RankContext& ctx) {
  run_inner(ctx, inner,
            [&](mesh::GroupKind group) { return ctx.net->all_reduce(group, data, count); });
}

// --- actions
// --------------------------------------------------------------------------------------

void StageRuntime::forward(int mb, RankContext& ctx) {
  Slot& s = slots_[mb];
  const int rows = layout_.rows;
  const float* params = params_.as<float>();
  for (int u = 0; u < static_cast<int>(layout_.units.size()); ++u) {
    const UnitLayout& unit = layout_.units[u];
    if (moe_[u] != nullptr) {
      moe_[u]->forward(mb, unit_input(s, u), s.y[u], params, ctx);
      continue;
    }
    for (int i = unit.first_linear; i < unit.first_linear + unit.num_linears; ++i) {
      const LinearLayout& l = layout_.linears[i];
      dev_.gemm(false, false, rows, l.out, l.in, 1.0f, linear_input(s, u, i), l.in,
                params + l.w_offset, l.out, 0.0f, s.z[i], l.out);
      // Row-parallel: partial products are summed over tp before the bias is added once.
      if (l.fwd_inner >= 0) tp_all_reduce(l.fwd_inner, s.z[i], size_t(rows) * l.out, ctx);
      dev_.bias_activation_forward(l.act, rows, l.out, params + l.b_offset, s.z[i], s.a[i]);
    }
    if (unit.residual) {
      const int last = unit.first_linear + unit.num_linears - 1;
      const size_t n = size_t(rows) * layout_.linears[last].out;
      dev_.copy(s.y[u], s.a[last], n * sizeof(float));
      dev_.axpy(n, 1.0f, unit_input(s, u), s.y[u]);
    }
  }
  if (!layout_.last) return;
  const float* out = s.y.back();
  if (layout_.loss == model::LossKind::kMse) {
    dev_.mse(size_t(rows) * layout_.output_dim, out, s.targets, layout_.loss_scale, s.grad_output,
             ctx.loss_accum);
  } else {
    dev_.softmax_cross_entropy(rows, layout_.output_dim, out, s.labels, layout_.loss_scale,
                               s.grad_output, ctx.loss_accum);
  }
}

void StageRuntime::input_grad(int mb, RankContext& ctx) {
  Slot& s = slots_[mb];
  const int rows = layout_.rows;
  const float* params = params_.as<float>();
  for (int u = static_cast<int>(layout_.units.size()) - 1; u >= 0; --u) {
    const UnitLayout& unit = layout_.units[u];
    if (moe_[u] != nullptr) {
      moe_[u]->input_grad(mb, unit_output_grad(s, u), s.dx[unit.first_linear], params, ctx);
      continue;
    }
    for (int i = unit.first_linear + unit.num_linears - 1; i >= unit.first_linear; --i) {
      const LinearLayout& l = layout_.linears[i];
      const float* d_out = linear_output_grad(s, u, i);
      if (s.dz[i] != nullptr) {
        dev_.activation_backward(l.act, rows, l.out, s.z[i], d_out, s.dz[i]);
      }
      if (!l.needs_dx) continue;
      dev_.gemm(false, true, rows, l.in, l.out, 1.0f, pre_activation_grad(s, u, i), l.out,
                params + l.w_offset, l.out, 0.0f, s.dx[i], l.in);
      // Column-parallel: each tp rank holds a partial input gradient.
      if (l.bwd_inner >= 0) tp_all_reduce(l.bwd_inner, s.dx[i], size_t(rows) * l.in, ctx);
    }
    if (unit.residual && layout_.linears[unit.first_linear].needs_dx) {
      const size_t n = size_t(rows) * layout_.linears[unit.first_linear].in;
      dev_.axpy(n, 1.0f, unit_output_grad(s, u), s.dx[unit.first_linear]);
    }
  }
}

void StageRuntime::weight_grad(int mb, RankContext&) {
  Slot& s = slots_[mb];
  const int rows = layout_.rows;
  float* grads = grads_.as<float>();
  for (int u = 0; u < static_cast<int>(layout_.units.size()); ++u) {
    const UnitLayout& unit = layout_.units[u];
    if (moe_[u] != nullptr) {
      moe_[u]->weight_grad(mb, unit_input(s, u), grads);
      continue;
    }
    for (int i = unit.first_linear; i < unit.first_linear + unit.num_linears; ++i) {
      const LinearLayout& l = layout_.linears[i];
      const float* dz = pre_activation_grad(s, u, i);
      dev_.gemm(true, false, l.in, l.out, rows, 1.0f, linear_input(s, u, i), l.in, dz, l.out, 1.0f,
                grads + l.w_offset, l.out);
      dev_.bias_grad(rows, l.out, dz, 1.0f, grads + l.b_offset);
    }
  }
}

void StageRuntime::zero_grads() { dev_.zero(grads_.get(), grads_.bytes()); }

void StageRuntime::optimizer_step() {
  dev_.sgd(layout_.param_count, layout_.lr, params_.as<float>(), grads_.as<float>());
}

}  // namespace meshscope::exec
