// The elementwise, loss and reduction ops of kernels/cpu against double-precision references
// written from the formulas (GELU tanh form, softmax cross-entropy, MSE), including gradients
// checked by central finite differences.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/cpu/ops.h"
#include "tests/kernels/uniform_vector.h"

namespace meshscope::kernels::cpu {
namespace {

std::vector<float> random_vector(size_t n, unsigned seed, float lo = -3, float hi = 3) {
  return testing::uniform_vector(n, seed, lo, hi);
}

double gelu_ref(double x) {
  return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
}
double act_ref(Activation a, double x) {
  if (a == Activation::kRelu) return x > 0 ? x : 0;
  if (a == Activation::kGelu) return gelu_ref(x);
  return x;
}

TEST(CpuOps, BiasActivationForwardKeepsPreAndAppliesActivation) {
  const int rows = 5, cols = 7;
  for (Activation act : {Activation::kNone, Activation::kRelu, Activation::kGelu}) {
    auto x = random_vector(rows * cols, 1);
    auto bias = random_vector(cols, 2);
    std::vector<float> pre = x, out(rows * cols);
    bias_activation_forward(act, rows, cols, bias.data(), pre.data(), out.data());
    for (int r = 0; r < rows; ++r) {
      for (int c = 0; c < cols; ++c) {
        const double z = static_cast<double>(x[r * cols + c]) + bias[c];
        EXPECT_NEAR(pre[r * cols + c], z, 1e-6);
        EXPECT_NEAR(out[r * cols + c], act_ref(act, z), 1e-5);
      }
    }
  }
  // No bias, output aliasing the pre-activation.
  auto x = random_vector(6, 3);
  auto y = x;
  bias_activation_forward(Activation::kNone, 2, 3, nullptr, y.data(), y.data());
  EXPECT_EQ(x, y);
}

TEST(CpuOps, ActivationBackwardMatchesFiniteDifferences) {
  const int n = 64;
  auto pre = random_vector(n, 4);
  auto g = random_vector(n, 5);
  for (Activation act : {Activation::kNone, Activation::kRelu, Activation::kGelu}) {
    std::vector<float> grad(n);
    activation_backward(act, 8, 8, pre.data(), g.data(), grad.data());
    for (int i = 0; i < n; ++i) {
      const double h = 1e-4, x = pre[i];
      if (act == Activation::kRelu && std::abs(x) < 2 * h) continue;
      const double d = (act_ref(act, x + h) - act_ref(act, x - h)) / (2 * h);
      EXPECT_NEAR(grad[i], g[i] * d, 1e-4) << "activation " << int(act) << " x=" << x;
    }
  }
  // grad_pre may alias grad_out.
  auto inplace = g;
  activation_backward(Activation::kGelu, 8, 8, pre.data(), inplace.data(), inplace.data());
  std::vector<float> separate(n);
  activation_backward(Activation::kGelu, 8, 8, pre.data(), g.data(), separate.data());
  EXPECT_EQ(inplace, separate);
}

TEST(CpuOps, BiasGradSumsRowsWithBeta) {
  const int rows = 9, cols = 4;
  auto g = random_vector(rows * cols, 6);
  std::vector<float> db = {1, 2, 3, 4};
  bias_grad(rows, cols, g.data(), 1.0f, db.data());
  for (int c = 0; c < cols; ++c) {
    double s = c + 1;
    for (int r = 0; r < rows; ++r) s += g[r * cols + c];
    EXPECT_NEAR(db[c], s, 1e-5);
  }
  std::vector<float> fresh(cols, NAN);
  bias_grad(rows, cols, g.data(), 0.0f, fresh.data());
  for (int c = 0; c < cols; ++c) EXPECT_FALSE(std::isnan(fresh[c]));
}

TEST(CpuOps, SoftmaxCrossEntropyLossAndGradient) {
  const int rows = 6, classes = 5;
  auto logits = random_vector(rows * classes, 7, -10, 10);
  const std::vector<int32_t> labels = {0, 4, 2, 2, 1, 3};
  const float scale = 1.0f / rows;
  std::vector<float> grad(rows * classes);
  const double loss =
      softmax_cross_entropy(rows, classes, logits.data(), labels.data(), scale, grad.data());
  auto ref_loss = [&](const std::vector<float>& z) {
    double total = 0;
    for (int r = 0; r < rows; ++r) {
      double denom = 0;
      for (int c = 0; c < classes; ++c) denom += std::exp(static_cast<double>(z[r * classes + c]));
      total += std::log(denom) - z[r * classes + labels[r]];
    }
    return scale * total;
  };
  EXPECT_NEAR(loss, ref_loss(logits), 1e-6);
  for (int i = 0; i < rows * classes; ++i) {
    auto up = logits, down = logits;
    up[i] += 1e-2f;
    down[i] -= 1e-2f;
    const double d = (ref_loss(up) - ref_loss(down)) / (static_cast<double>(up[i]) - down[i]);
    EXPECT_NEAR(grad[i], d, 1e-4);
  }
  const std::vector<int32_t> bad = {0, 5, 0, 0, 0, 0};
  EXPECT_THROW(softmax_cross_entropy(rows, classes, logits.data(), bad.data(), 1, grad.data()),
               std::out_of_range);
}

TEST(CpuOps, SoftmaxCrossEntropyIsStableForLargeLogits) {
  const std::vector<float> logits = {1000.0f, 0.0f, -1000.0f};
  const std::vector<int32_t> label = {1};
  std::vector<float> grad(3);
  const double loss = softmax_cross_entropy(1, 3, logits.data(), label.data(), 1, grad.data());
  EXPECT_NEAR(loss, 1000.0, 1e-3);
  EXPECT_NEAR(grad[0], 1.0, 1e-6);
  EXPECT_NEAR(grad[1], -1.0, 1e-6);
}

TEST(CpuOps, MseLossAndGradient) {
  auto pred = random_vector(10, 8), target = random_vector(10, 9);
  std::vector<float> grad(10);
  const double loss = mse(10, pred.data(), target.data(), 0.1f, grad.data());
  double ref = 0;
  for (int i = 0; i < 10; ++i) {
    const double d = static_cast<double>(pred[i]) - target[i];
    ref += d * d;
    EXPECT_NEAR(grad[i], 0.1 * 2 * d, 1e-6);
  }
  EXPECT_NEAR(loss, 0.1 * ref, 1e-5);
}

TEST(CpuOps, SgdAxpyFillSum) {
  std::vector<float> p = {1, 2, 3}, g = {10, 20, 30};
  sgd(3, 0.1f, p.data(), g.data());
  EXPECT_FLOAT_EQ(p[0], 0.0f);
  EXPECT_FLOAT_EQ(p[2], 0.0f);
  std::vector<float> y = {1, 1, 1};
  axpy(3, 2.0f, g.data(), y.data());
  EXPECT_EQ(y, (std::vector<float>{21, 41, 61}));
  fill(3, 7.5f, y.data());
  EXPECT_EQ(y, (std::vector<float>{7.5f, 7.5f, 7.5f}));
  std::vector<float> a = {1, 2}, b = {10, 20}, c = {100, 200};
  const float* in[] = {a.data(), b.data(), c.data()};
  sum(2, in, 3, a.data());  // out aliases inputs[0]
  EXPECT_EQ(a, (std::vector<float>{111, 222}));
  EXPECT_THROW(sum(2, in, 0, a.data()), std::invalid_argument);
}

}  // namespace
}  // namespace meshscope::kernels::cpu
