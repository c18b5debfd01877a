// Per-stage op lists of the executable workloads.
#include "sim/model/workload_cost.h"

#include <stdexcept>

namespace meshscope::model {
namespace {

constexpr double kF = sizeof(float);

// FLOPs per element of an activation (forward) and of its derivative (backward); GELU's tanh
// form counted as ~8 multiply/add-equivalents, as roofline models usually do.
double act_flops(Activation a) {
  return a == Activation::kGelu ? 8 : a == Activation::kRelu ? 1 : 0;
}
double act_grad_flops(Activation a) {
  return a == Activation::kGelu ? 12 : a == Activation::kRelu ? 1 : 0;
}

OpCost gemm(std::string name, int64_t m, int64_t n, int64_t k) {
  OpCost op{std::move(name), OpKind::kGemm, 2.0 * m * n * k, kF * (m * k + k * n + m * n)};
  op.m = m;
  op.n = n;
  op.k = k;
  return op;
}

OpCost elementwise(std::string name, double elements, double flops_per, double tensors) {
  return OpCost{std::move(name), OpKind::kElementwise, elements * flops_per,
                kF * elements * tensors};
}

void add_linear(StageCost& c, const LinearSpec& l, int tp, int rows, bool needs_input_grad) {
  const int in = local_in(l, tp), out = local_out(l, tp);
  const double elems = double(rows) * out;
  // Forward: GEMM, then bias + activation (reads pre, writes pre and out).
  c.forward.push_back(gemm(l.name, rows, out, in));
  c.forward.push_back(elementwise(l.name + ".bias_act", elems, 1 + act_flops(l.act), 3));
  if (l.split == TpSplit::kRow && tp > 1) {
    c.tp_forward.push_back({l.name + ".allreduce", static_cast<int64_t>(elems * kF)});
  }
  // Input gradient: activation derivative, then dX = dZ W^T.
  if (l.act != Activation::kNone) {
    c.input_grad.push_back(elementwise(l.name + ".act_grad", elems, act_grad_flops(l.act), 3));
  }
  if (needs_input_grad) {
    c.input_grad.push_back(gemm(l.name + ".dgrad", rows, in, out));
    if (l.split == TpSplit::kColumn && tp > 1) {
      c.tp_backward.push_back({l.name + ".dgrad_allreduce", static_cast<int64_t>(kF * rows * in)});
    }
  }
  // Weight gradient: dW += X^T dZ, db += sum_rows dZ.
  c.weight_grad.push_back(gemm(l.name + ".wgrad", in, out, rows));
  c.weight_grad.push_back(elementwise(l.name + ".bgrad", elems, 1, 1));
  c.parameters += int64_t{in} * out + (l.split == TpSplit::kRow ? l.out : out);
  c.activation_bytes += static_cast<int64_t>(
      kF * elems * (l.act == Activation::kNone ? 1 : 2));       // pre-activation (+ activation)
  c.weight_grad_bytes += static_cast<int64_t>(kF * rows * in);  // W needs every linear's input
}

// A moe block on one ep rank, per microbatch of `rows` tokens (profiler/exec/moe_block.cpp runs
// these steps in this order).
void add_moe_unit(StageCost& c, const Unit& u, const WorkloadSpec& spec, int rows) {
  const int64_t T = rows, E = spec.experts, k = spec.top_k, h = spec.hidden;
  const int64_t f = u.linears[moe_fc1(0)].out, C = expert_capacity(spec, rows);
  const int64_t ep = spec.ep, local = local_experts(spec);
  const double slots = double(E) * C;  // dispatch buffer rows, = rows its experts take here
  const int64_t a2a = static_cast<int64_t>(kF * slots * h);  // every all-to-all's send buffer
  const std::string& n = u.name;
  auto all_to_all = [&](std::vector<TpCollective>& into, const char* what) {
    if (ep > 1) into.push_back({n + what, a2a, CommOp::kAllToAll, CommAxis::kEp});
  };
  // Forward: router, softmax, top-k with capacity, dispatch, experts, combine, residual.
  c.forward.push_back(gemm(n + ".router", T, E, h));
  c.forward.push_back(elementwise(n + ".router.bias", double(T) * E, 1, 3));
  c.forward.push_back(elementwise(n + ".softmax", double(T) * E, 5, 2));
  c.forward.push_back(elementwise(n + ".top_k", double(T) * E, double(k), 1));
  c.forward.push_back(elementwise(n + ".dispatch", slots * h, 0, 2));
  all_to_all(c.tp_forward, ".dispatch");
  for (int64_t b = 0; b < local * ep; ++b) {  // each local expert, each source rank's block
    c.forward.push_back(gemm(n + ".expert.fc1", C, f, h));
    c.forward.push_back(elementwise(n + ".expert.fc1.bias_act", double(C) * f, 9, 3));
    c.forward.push_back(gemm(n + ".expert.fc2", C, h, f));
    c.forward.push_back(elementwise(n + ".expert.fc2.bias", double(C) * h, 1, 3));
  }
  all_to_all(c.tp_forward, ".combine");
  c.forward.push_back(elementwise(n + ".combine", double(T) * (k + 1) * h, 2, 3));
  // Input gradient: combine backward, experts' dgrads, dispatch backward, router backward.
  c.input_grad.push_back(elementwise(n + ".combine_grad", slots * h + double(T) * k * h, 3, 3));
  all_to_all(c.tp_backward, ".combine.grad");
  for (int64_t b = 0; b < local * ep; ++b) {
    c.input_grad.push_back(gemm(n + ".expert.fc2.dgrad", C, f, h));
    c.input_grad.push_back(elementwise(n + ".expert.fc1.act_grad", double(C) * f, 12, 3));
    c.input_grad.push_back(gemm(n + ".expert.fc1.dgrad", C, h, f));
  }
  all_to_all(c.tp_backward, ".dispatch.grad");
  c.input_grad.push_back(elementwise(n + ".router_grad", double(T) * E, 4, 3));
  c.input_grad.push_back(elementwise(n + ".dispatch_grad", double(T) * (k + 1) * h, 1, 3));
  c.input_grad.push_back(gemm(n + ".router.dgrad", T, h, E));
  // Weight gradient: the router's and the local experts'.
  c.weight_grad.push_back(gemm(n + ".router.wgrad", h, E, T));
  c.weight_grad.push_back(elementwise(n + ".router.bgrad", double(T) * E, 1, 1));
  for (int64_t b = 0; b < local * ep; ++b) {
    c.weight_grad.push_back(gemm(n + ".expert.fc1.wgrad", h, f, C));
    c.weight_grad.push_back(elementwise(n + ".expert.fc1.bgrad", double(C) * f, 1, 1));
    c.weight_grad.push_back(gemm(n + ".expert.fc2.wgrad", f, h, C));
    c.weight_grad.push_back(elementwise(n + ".expert.fc2.bgrad", double(C) * h, 1, 1));
  }
  const int64_t experts = local * (h * f + f + f * h + h);
  c.parameters += h * E + E + experts;
  c.expert_parameters += experts;
  // Kept from F to B: probabilities, choices and gates, the experts' inputs, pre-activations,
  // activations and outputs (and, with ep > 1, the outputs back on the token side), the output.
  const double kept = double(T) * E + double(T) * k * 2 + slots * (h + 2 * f + h) +
                      (ep > 1 ? slots * h : 0) + double(T) * h;
  c.activation_bytes += static_cast<int64_t>(kF * kept);
  // W needs the router's input and the experts' inputs and hidden activations.
  c.weight_grad_bytes += static_cast<int64_t>(kF * (double(T) * h + slots * (h + f)));
}

int unit_out_local(const Unit& u, int tp) { return local_out(u.linears.back(), tp); }
int unit_in_local(const Unit& u, int tp) { return local_in(u.linears.front(), tp); }

}  // namespace

std::vector<StageCost> stage_costs(const Workload& w, const std::vector<StageRange>& stages, int tp,
                                   int microbatch_rows) {
  check_tp(w, tp);
  if (microbatch_rows < 1) throw std::invalid_argument("stage_costs: microbatch_rows must be >= 1");
  std::vector<StageCost> out;
  const int rows = microbatch_rows;
  for (size_t s = 0; s < stages.size(); ++s) {
    const StageRange& range = stages[s];
    if (range.first_unit < 0 || range.end_unit > static_cast<int>(w.units.size()) ||
        range.size() < 1) {
      throw std::invalid_argument("stage_costs: stage " + std::to_string(s) + " has no units");
    }
    const bool first = s == 0, last = s + 1 == stages.size();
    StageCost c;
    c.stage = static_cast<int>(s);
    const Unit& head = w.units[range.first_unit];
    const Unit& tail = w.units[range.end_unit - 1];
    const int64_t in_bytes = static_cast<int64_t>(kF * rows * unit_in_local(head, tp));
    const int64_t out_bytes = static_cast<int64_t>(kF * rows * unit_out_local(tail, tp));
    c.input_bytes = first ? 0 : in_bytes;
    c.output_bytes = last ? 0 : out_bytes;
    c.activation_bytes = in_bytes;  // the stage input is kept for the weight gradient
    for (int u = range.first_unit; u < range.end_unit; ++u) {
      const Unit& unit = w.units[u];
      if (unit.kind == UnitKind::kMoe) {
        add_moe_unit(c, unit, w.spec, rows);
        continue;
      }
      for (size_t i = 0; i < unit.linears.size(); ++i) {
        const bool needs_dx = w.spec.data_gradient || !(first && u == range.first_unit && i == 0);
        add_linear(c, unit.linears[i], tp, rows, needs_dx);
      }
      if (unit.residual) {
        const double elems = double(rows) * unit_out_local(unit, tp);
        c.forward.push_back(elementwise(unit.name + ".residual", elems, 1, 3));
        c.input_grad.push_back(elementwise(unit.name + ".residual_grad", elems, 1, 3));
        c.activation_bytes += static_cast<int64_t>(kF * elems);
      }
    }
    if (last) {
      const double elems = double(rows) * w.output_dim;
      c.forward.push_back(OpCost{w.loss == LossKind::kMse ? "loss.mse" : "loss.softmax_xent",
                                 OpKind::kLoss, elems * (w.loss == LossKind::kMse ? 4 : 8),
                                 kF * elems * 3});
      c.activation_bytes += static_cast<int64_t>(kF * elems);  // the loss gradient
    }
    out.push_back(std::move(c));
  }
  return out;
}

int64_t dp_reduced_parameters(const StageCost& c, int ep) {
  return ep > 1 ? c.parameters - c.expert_parameters : c.parameters;
}

std::vector<StageCost> workload_stage_costs(const WorkloadSpec& spec, int dp, int tp,
                                            int num_stages, int microbatches) {
  const Workload w = make_workload(spec);
  return stage_costs(w, partition_units(static_cast<int>(w.units.size()), num_stages), tp,
                     microbatch_rows(spec.batch, dp, microbatches));
}

}  // namespace meshscope::model
