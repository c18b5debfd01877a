// VGG layers as implicit GEMMs, grouped into stages by forward FLOPs.
#include "sim/model/vgg.h"

#include <stdexcept>
#include <string>

#include "sim/model/transformer.h"

namespace meshscope::model {
namespace {

// One partition unit: a convolution (with its ReLU and any pooling after it) or a linear.
struct VggUnit {
  std::vector<OpCost> forward, input_grad, weight_grad;
  int64_t parameters = 0;
  int64_t activation_bytes = 0;
  int64_t output_bytes = 0;
  double flops = 0;
};

OpCost conv(const std::string& name, int64_t m, int64_t n, int64_t k, int e) {
  OpCost op;
  op.name = name;
  op.kind = OpKind::kConv;
  op.m = m;
  op.n = n;
  op.k = k;
  op.flops = 2.0 * double(m) * double(n) * double(k);
  op.bytes = e * (double(m) * k / 9 + double(k) * n + double(m) * n);  // input read once, not 9x
  return op;
}

std::vector<VggUnit> units_of(const VggSpec& spec, int64_t b, int e) {
  std::vector<VggUnit> units;
  int64_t side = spec.image, ch = spec.in_channels;
  for (size_t i = 0; i < spec.convs.size(); ++i) {
    const int64_t out = spec.convs[i];
    if (out == 0) {
      if (units.empty()) throw std::invalid_argument("vgg: a pool before any convolution");
      if (side < 2) throw std::invalid_argument("vgg: pooling below one pixel");
      VggUnit& u = units.back();
      const double elems = double(b) * side * side * ch;
      u.forward.push_back(elementwise("pool", OpKind::kElementwise, elems, e, 1));
      u.input_grad.push_back(elementwise("pool.grad", OpKind::kElementwise, elems, e, 1));
      side /= 2;
      u.output_bytes = b * side * side * ch * e;
      continue;
    }
    VggUnit u;
    const std::string name = "conv" + std::to_string(units.size() + 1);
    const int64_t m = b * side * side;
    u.forward.push_back(conv(name, m, out, 9 * ch, e));
    u.input_grad.push_back(conv(name + ".dgrad", m, ch, 9 * out, e));
    u.weight_grad.push_back(conv(name + ".wgrad", 9 * ch, out, m, e));
    u.forward.push_back(elementwise("relu", OpKind::kElementwise, double(m) * out, e, 1));
    u.input_grad.push_back(elementwise("relu.grad", OpKind::kElementwise, double(m) * out, e, 1));
    u.parameters = 9 * ch * out + out;
    u.activation_bytes = m * (ch + out) * e;
    u.output_bytes = m * out * e;
    u.flops = u.forward.front().flops;
    units.push_back(std::move(u));
    ch = out;
  }
  int64_t in = side * side * ch;
  std::vector<int64_t> fcs = spec.fc;
  fcs.push_back(spec.classes);
  for (size_t i = 0; i < fcs.size(); ++i) {
    VggUnit u;
    const std::string name = "fc" + std::to_string(i + 1);
    GemmOps ops{&u.forward, &u.input_grad, &u.weight_grad};
    add_linear(ops, name.c_str(), b, in, fcs[i], e, 1);
    u.parameters = in * fcs[i] + fcs[i];
    u.activation_bytes = b * (in + fcs[i]) * e;
    u.output_bytes = b * fcs[i] * e;
    u.flops = u.forward.front().flops;
    if (i + 1 == fcs.size()) {
      u.forward.push_back(elementwise("softmax_ce", OpKind::kLoss, double(b) * fcs[i], 4, 6));
      u.output_bytes = 0;
    }
    units.push_back(std::move(u));
    in = fcs[i];
  }
  return units;
}

}  // namespace

VggModel build_vgg(const VggSpec& spec, int64_t micro_batch, int num_stages, int e) {
  if (micro_batch < 1 || num_stages < 1)
    throw std::invalid_argument("vgg: micro batch and stages must be >= 1");
  std::vector<VggUnit> units = units_of(spec, micro_batch, e);
  if (static_cast<int>(units.size()) < num_stages)
    throw std::invalid_argument("vgg: " + std::to_string(units.size()) + " layers cannot fill " +
                                std::to_string(num_stages) + " pipeline stages");
  double total = 0;
  for (const VggUnit& u : units) total += u.flops;
  VggModel model;
  model.model_flops_per_microbatch = 3 * total;
  // Contiguous greedy split: close a stage once it reaches its share of the remaining FLOPs,
  // keeping at least one unit for every later stage.
  size_t next = 0;
  double remaining = total;
  for (int s = 0; s < num_stages; ++s) {
    StageCost c;
    c.stage = s;
    const double target = remaining / (num_stages - s);
    double acc = 0;
    const size_t must_leave = static_cast<size_t>(num_stages - s - 1);
    while (next < units.size() - must_leave) {
      const VggUnit& u = units[next];
      if (acc > 0 && acc + u.flops / 2 > target && s + 1 < num_stages) break;
      c.forward.insert(c.forward.end(), u.forward.begin(), u.forward.end());
      c.input_grad.insert(c.input_grad.end(), u.input_grad.begin(), u.input_grad.end());
      c.weight_grad.insert(c.weight_grad.end(), u.weight_grad.begin(), u.weight_grad.end());
      c.parameters += u.parameters;
      c.activation_bytes += u.activation_bytes;
      c.output_bytes = u.output_bytes;
      acc += u.flops;
      ++next;
    }
    remaining -= acc;
    c.weight_grad_bytes = c.activation_bytes / 2;
    if (s > 0) c.input_bytes = model.stages.back().output_bytes;
    model.total_parameters += c.parameters;
    model.stages.push_back(std::move(c));
  }
  return model;
}

}  // namespace meshscope::model
