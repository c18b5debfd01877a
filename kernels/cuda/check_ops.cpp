// Checks of the non-GEMM ops: bias + activation, its backward, bias grad, SGD, axpy, fill, sum,
// and the two losses (value, gradient, and the bad-label error).
#include <stdexcept>
#include <string>

#include "kernels/cuda/check_internal.h"

namespace meshscope::kernels::cuda::detail {
namespace {

constexpr std::string_view kActNames[] = {"none", "relu", "gelu"};
constexpr int kRows = 37, kCols = 300;  // odd sizes: partial blocks and tiles
constexpr size_t kN = size_t{kRows} * kCols;

void check_bias_activation(Checker& c, Activation act, bool with_bias) {
  const auto pre = c.random(kN, -3.f, 3.f);
  const auto bias = c.random(kCols);
  auto d_pre = c.upload(pre);
  auto d_bias = c.upload(bias);
  auto d_out = c.poisoned(kN);
  bias_activation_forward(c.ctx(), act, kRows, kCols, with_bias ? d_bias.data() : nullptr,
                          d_pre.data(), d_out.data());
  auto ref_pre = pre;
  std::vector<float> ref_out(kN);
  cpu::bias_activation_forward(act, kRows, kCols, with_bias ? bias.data() : nullptr, ref_pre.data(),
                               ref_out.data());
  const std::string v = std::string(kActNames[static_cast<int>(act)]) +
                        (with_bias ? " bias" : " no-bias") + " 37x300";
  c.expect_close("bias_activation_forward.out", v, c.download(d_out), ref_out, kFp32Tolerance);
  c.expect_close("bias_activation_forward.pre", v, c.download(d_pre), ref_pre, kFp32Tolerance);
}

void check_activation_backward(Checker& c, Activation act) {
  const auto pre = c.random(kN, -3.f, 3.f);
  const auto grad_out = c.random(kN);
  auto d_pre = c.upload(pre);
  auto d_go = c.upload(grad_out);
  auto d_gp = c.poisoned(kN);
  activation_backward(c.ctx(), act, kRows, kCols, d_pre.data(), d_go.data(), d_gp.data());
  std::vector<float> ref(kN);
  cpu::activation_backward(act, kRows, kCols, pre.data(), grad_out.data(), ref.data());
  c.expect_close("activation_backward", std::string(kActNames[static_cast<int>(act)]) + " 37x300",
                 c.download(d_gp), ref, kFp32Tolerance);
}

void check_bias_grad(Checker& c, float beta) {
  const auto grad = c.random(kN);
  auto ref = beta == 0 ? std::vector<float>(kCols, 0.f) : c.random(kCols);
  auto d_grad = c.upload(grad);
  auto d_db = beta == 0 ? c.poisoned(kCols) : c.upload(ref);
  bias_grad(c.ctx(), kRows, kCols, d_grad.data(), beta, d_db.data());
  cpu::bias_grad(kRows, kCols, grad.data(), beta, ref.data());
  c.expect_close("bias_grad", beta == 0 ? "beta=0 37x300" : "beta=1 37x300", c.download(d_db), ref,
                 kFp32Tolerance);
}

void check_vector_ops(Checker& c) {
  const auto x = c.random(kN);
  const auto y = c.random(kN);
  auto dx = c.upload(x);
  auto dy = c.upload(y);
  axpy(c.ctx(), kN, 0.3f, dx.data(), dy.data());
  auto ref = y;
  cpu::axpy(kN, 0.3f, x.data(), ref.data());
  c.expect_close("axpy", "n=11100", c.download(dy), ref, kFp32Tolerance);

  auto dp = c.upload(y);
  sgd(c.ctx(), kN, 0.05f, dp.data(), dx.data());
  ref = y;
  cpu::sgd(kN, 0.05f, ref.data(), x.data());
  c.expect_close("sgd", "n=11100", c.download(dp), ref, kFp32Tolerance);

  auto df = c.poisoned(kN);
  fill(c.ctx(), kN, 1.5f, df.data());
  ref.assign(kN, 0.f);
  cpu::fill(kN, 1.5f, ref.data());
  c.expect_close("fill", "n=11100", c.download(df), ref, kFp32Tolerance);
}

void check_sum(Checker& c, int inputs, bool alias_first) {
  std::vector<std::vector<float>> host;
  std::vector<DeviceBuffer<float>> dev;
  std::vector<const float*> dptr, hptr;
  for (int i = 0; i < inputs; ++i) {
    host.push_back(c.random(kN));
    dev.push_back(c.upload(host.back()));
  }
  for (int i = 0; i < inputs; ++i) {
    dptr.push_back(dev[i].data());
    hptr.push_back(host[i].data());
  }
  auto d_out = alias_first ? DeviceBuffer<float>() : c.poisoned(kN);
  float* out = alias_first ? dev[0].data() : d_out.data();
  sum(c.ctx(), kN, dptr.data(), inputs, out);
  std::vector<float> ref(kN);
  cpu::sum(kN, hptr.data(), inputs, ref.data());
  const auto got = alias_first ? c.download(dev[0]) : c.download(d_out);
  c.expect_close("sum", std::to_string(inputs) + " inputs" + (alias_first ? " out=in[0]" : ""), got,
                 ref, kFp32Tolerance);
}

void check_softmax_xent(Checker& c, int rows, int classes) {
  const auto logits = c.random(static_cast<size_t>(rows) * classes, -4.f, 4.f);
  const auto labels = c.random_labels(rows, classes);
  auto d_logits = c.upload(logits);
  auto d_labels = c.upload(labels);
  auto d_grad = c.poisoned(logits.size());
  const float scale = 1.f / rows;
  const double loss = softmax_cross_entropy(c.ctx(), rows, classes, d_logits.data(),
                                            d_labels.data(), scale, d_grad.data());
  std::vector<float> ref_grad(logits.size());
  const double ref_loss = cpu::softmax_cross_entropy(rows, classes, logits.data(), labels.data(),
                                                     scale, ref_grad.data());
  const std::string v = std::to_string(rows) + "x" + std::to_string(classes);
  c.expect_close("softmax_cross_entropy.loss", v, loss, ref_loss, kFp32Tolerance);
  c.expect_close("softmax_cross_entropy.grad", v, c.download(d_grad), ref_grad, kFp32Tolerance);
}

void check_bad_label(Checker& c) {
  const auto logits = c.random(4 * 10);
  auto d_logits = c.upload(logits);
  auto d_labels = c.upload(std::vector<int32_t>{1, 2, 10, 3});
  auto d_grad = c.poisoned(logits.size());
  bool threw = false;
  try {
    softmax_cross_entropy(c.ctx(), 4, 10, d_logits.data(), d_labels.data(), 1.f, d_grad.data());
  } catch (const std::out_of_range&) {
    threw = true;
  }
  c.expect_true("softmax_cross_entropy.bad_label", "label 10 of 10 classes", threw,
                "no std::out_of_range thrown");
}

void check_mse(Checker& c) {
  const auto pred = c.random(kN);
  const auto target = c.random(kN);
  auto dp = c.upload(pred);
  auto dt = c.upload(target);
  auto dg = c.poisoned(kN);
  const double loss = mse(c.ctx(), kN, dp.data(), dt.data(), 0.5f, dg.data());
  std::vector<float> ref_grad(kN);
  const double ref_loss = cpu::mse(kN, pred.data(), target.data(), 0.5f, ref_grad.data());
  c.expect_close("mse.loss", "n=11100", loss, ref_loss, kFp32Tolerance);
  c.expect_close("mse.grad", "n=11100", c.download(dg), ref_grad, kFp32Tolerance);
}

// The DeviceOps form: losses add to a device accumulator that already holds a value.
void check_accumulate(Checker& c) {
  const int rows = 9, classes = 12;
  const auto logits = c.random(static_cast<size_t>(rows) * classes, -2.f, 2.f);
  const auto labels = c.random_labels(rows, classes);
  auto d_logits = c.upload(logits);
  auto d_labels = c.upload(labels);
  auto d_grad = c.poisoned(logits.size());
  DeviceBuffer<double> accum(1);
  const double start = 1.5;
  MESHSCOPE_CUDA_CHECK(cudaMemcpyAsync(accum.data(), &start, sizeof(double), cudaMemcpyHostToDevice,
                                       c.ctx().stream()));
  softmax_cross_entropy_accumulate(c.ctx(), rows, classes, d_logits.data(), d_labels.data(), 0.5f,
                                   d_grad.data(), accum.data());
  softmax_cross_entropy_accumulate(c.ctx(), rows, classes, d_logits.data(), d_labels.data(), 0.5f,
                                   d_grad.data(), accum.data());
  double got = 0;
  MESHSCOPE_CUDA_CHECK(cudaMemcpyAsync(&got, accum.data(), sizeof(double), cudaMemcpyDeviceToHost,
                                       c.ctx().stream()));
  c.sync();
  std::vector<float> ref_grad(logits.size());
  const double ref = cpu::softmax_cross_entropy(rows, classes, logits.data(), labels.data(), 0.5f,
                                                ref_grad.data());
  c.expect_close("softmax_cross_entropy.accumulate", "1.5 + 2 x 9x12", got, start + 2 * ref,
                 kFp32Tolerance);
}

}  // namespace

void check_elementwise(Checker& c) {
  for (auto act : {Activation::kNone, Activation::kRelu, Activation::kGelu}) {
    check_bias_activation(c, act, true);
    check_activation_backward(c, act);
  }
  check_bias_activation(c, Activation::kGelu, false);
  check_bias_grad(c, 0.f);
  check_bias_grad(c, 1.f);
  check_vector_ops(c);
  check_sum(c, 1, false);
  check_sum(c, 3, true);
  check_sum(c, 11, false);  // more peers than one launch takes
}

void check_losses(Checker& c) {
  check_softmax_xent(c, 33, 10);
  check_softmax_xent(c, 17, 1000);
  check_bad_label(c);
  check_mse(c);
  check_accumulate(c);
}

}  // namespace meshscope::kernels::cuda::detail
