// Plain full-batch forward, backward and SGD on host vectors.
#include "profiler/exec/reference.h"

#include <algorithm>
#include <stdexcept>

#include "kernels/cpu/ops.h"
#include "profiler/exec/reference_moe.h"
#include "sim/model/data.h"

namespace meshscope::exec {
namespace {

namespace k = kernels::cpu;
using Vec = std::vector<float>;

struct LinearTape {
  const Vec* x = nullptr;  // input of the linear
  Vec z, a;
};

double train_step(const model::Workload& w, std::vector<model::LinearWeights>& params,
                  const model::Batch& batch, int group_rows) {
  const int n = batch.rows;
  std::vector<LinearTape> tape(params.size());
  std::vector<Vec> unit_out(w.units.size());
  std::vector<MoeTape> moe_tape(w.units.size());
  const Vec* x = &batch.inputs;
  size_t li = 0;
  for (size_t u = 0; u < w.units.size(); ++u) {
    const Vec* unit_in = x;
    if (w.units[u].kind == model::UnitKind::kMoe) {
      moe_forward(w, w.units[u], &params[li], n, group_rows, *x, unit_out[u], moe_tape[u]);
      li += w.units[u].linears.size();
      x = &unit_out[u];
      continue;
    }
    for (size_t i = 0; i < w.units[u].linears.size(); ++i, ++li) {
      const model::LinearWeights& p = params[li];
      LinearTape& t = tape[li];
      t.x = x;
      t.z.assign(size_t(n) * p.out, 0.0f);
      k::gemm(false, false, n, p.out, p.in, 1.0f, x->data(), p.in, p.w.data(), p.out, 0.0f,
              t.z.data(), p.out);
      t.a.resize(t.z.size());
      k::bias_activation_forward(w.units[u].linears[i].act, n, p.out, p.b.data(), t.z.data(),
                                 t.a.data());
      x = &t.a;
    }
    if (w.units[u].residual) {
      unit_out[u] = *x;
      k::axpy(unit_out[u].size(), 1.0f, unit_in->data(), unit_out[u].data());
      x = &unit_out[u];
    }
  }
  const float scale = static_cast<float>(model::loss_scale(w));
  Vec grad(x->size());
  const double loss = w.loss == model::LossKind::kMse
                          ? k::mse(x->size(), x->data(), batch.targets.data(), scale, grad.data())
                          : k::softmax_cross_entropy(n, w.output_dim, x->data(),
                                                     batch.labels.data(), scale, grad.data());
  std::vector<model::LinearWeights> grads = params;
  for (size_t u = w.units.size(); u-- > 0;) {
    const Vec d_unit_out = grad;
    if (w.units[u].kind == model::UnitKind::kMoe) {
      li -= w.units[u].linears.size();
      for (size_t i = li; i < li + w.units[u].linears.size(); ++i) {
        std::fill(grads[i].w.begin(), grads[i].w.end(), 0.0f);
        std::fill(grads[i].b.begin(), grads[i].b.end(), 0.0f);
      }
      moe_backward(w, w.units[u], &params[li], n, group_rows, moe_tape[u], d_unit_out, grad,
                   &grads[li]);
      continue;
    }
    for (size_t i = w.units[u].linears.size(); i-- > 0;) {
      --li;
      const model::LinearWeights& p = params[li];
      LinearTape& t = tape[li];
      Vec dz(grad.size());
      k::activation_backward(w.units[u].linears[i].act, n, p.out, t.z.data(), grad.data(),
                             dz.data());
      k::gemm(true, false, p.in, p.out, n, 1.0f, t.x->data(), p.in, dz.data(), p.out, 0.0f,
              grads[li].w.data(), p.out);
      k::bias_grad(n, p.out, dz.data(), 0.0f, grads[li].b.data());
      Vec dx(size_t(n) * p.in);
      k::gemm(false, true, n, p.in, p.out, 1.0f, dz.data(), p.out, p.w.data(), p.out, 0.0f,
              dx.data(), p.in);
      grad = std::move(dx);
    }
    if (w.units[u].residual) k::axpy(grad.size(), 1.0f, d_unit_out.data(), grad.data());
  }
  for (size_t i = 0; i < params.size(); ++i) {
    k::sgd(params[i].w.size(), w.spec.lr, params[i].w.data(), grads[i].w.data());
    k::sgd(params[i].b.size(), w.spec.lr, params[i].b.data(), grads[i].b.data());
  }
  return loss;
}

}  // namespace

ReferenceResult run_reference(const model::WorkloadSpec& spec, int steps, int routing_rows) {
  if (steps < 1) throw std::invalid_argument("reference: steps must be >= 1");
  const model::Workload w = model::make_workload(spec);
  const int group_rows = routing_rows > 0 ? routing_rows : spec.batch;
  ReferenceResult r;
  r.weights = model::init_weights(w);
  for (int s = 0; s < steps; ++s)
    r.losses.push_back(train_step(w, r.weights, model::make_batch(w, s), group_rows));
  return r;
}

}  // namespace meshscope::exec
