// The mixture-of-experts routing ops of kernels/cpu against straightforward loops written from
// their contracts (top-k by a stable sort, capacity by counting), a worked example of ties and
// drops, and the gradients (router_backward, moe_combine_backward) against central finite
// differences of the combined output.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/cpu/ops.h"
#include "tests/kernels/uniform_vector.h"

namespace meshscope::kernels::cpu {
namespace {

std::vector<float> random_vector(size_t n, unsigned seed, float lo = -2, float hi = 2) {
  return testing::uniform_vector(n, seed, lo, hi);
}

std::vector<double> softmax_ref(const std::vector<double>& z) {
  const double m = *std::max_element(z.begin(), z.end());
  double s = 0;
  for (double x : z) s += std::exp(x - m);
  std::vector<double> p;
  for (double x : z) p.push_back(std::exp(x - m) / s);
  return p;
}

TEST(CpuMoeOps, SoftmaxRowsMatchesTheFormulaAndMayWorkInPlace) {
  const int rows = 5, cols = 7;
  const auto z = random_vector(rows * cols, 1, -20, 20);
  std::vector<float> p(z.size());
  softmax_rows(rows, cols, z.data(), p.data());
  for (int r = 0; r < rows; ++r) {
    const auto ref =
        softmax_ref(std::vector<double>(z.begin() + r * cols, z.begin() + (r + 1) * cols));
    for (int c = 0; c < cols; ++c) EXPECT_NEAR(p[r * cols + c], ref[c], 1e-7) << r << "," << c;
  }
  auto inplace = z;
  softmax_rows(rows, cols, inplace.data(), inplace.data());
  EXPECT_EQ(inplace, p);
}

// The rule of top_k_route on a case worked by hand: 4 tokens, 3 experts, k = 2, capacity 2.
TEST(CpuMoeOps, TopKRouteBreaksTiesByIndexAndPlacesFirstChoicesBeforeSecondOnes) {
  const std::vector<float> probs = {
      0.5f, 0.3f, 0.2f,  // token 0: experts 0, 1
      0.4f, 0.4f, 0.2f,  // token 1: a tie, expert 0 first, then 1
      0.1f, 0.3f, 0.6f,  // token 2: experts 2, 1
      0.6f, 0.1f, 0.3f,  // token 3: experts 0, 2
  };
  std::vector<int32_t> dest(8);
  std::vector<float> gate(8);
  top_k_route(4, 3, 2, 2, probs.data(), dest.data(), gate.data());
  // First choices in token order: expert 0 takes tokens 0 and 1, token 3 finds it full (dropped);
  // expert 2 takes token 2. Second choices then: expert 1 takes tokens 0 and 1, token 2 finds it
  // full; expert 2 takes token 3 after token 2. dest = expert * capacity + position.
  EXPECT_EQ(dest, (std::vector<int32_t>{0, 2, 1, 3, 4, -1, -1, 5}));
  EXPECT_EQ(gate, (std::vector<float>{0.5f, 0.3f, 0.4f, 0.4f, 0.6f, 0.3f, 0.6f, 0.3f}));
}

TEST(CpuMoeOps, TopKRouteMatchesAStableSortAndCounting) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 40; ++trial) {
    const int tokens = 1 + static_cast<int>(rng() % 40), experts = 1 + static_cast<int>(rng() % 9);
    const int k = 1 + static_cast<int>(rng() % experts);
    const int capacity = 1 + static_cast<int>(rng() % (tokens + 1));
    auto probs = random_vector(size_t(tokens) * experts, 100 + trial, 0, 1);
    // Some exact ties, which must go to the lower index.
    for (int t = 0; t + 1 < tokens; t += 3) probs[t * experts] = probs[t * experts + experts - 1];
    std::vector<int32_t> dest(size_t(tokens) * k);
    std::vector<float> gate(dest.size());
    top_k_route(tokens, experts, k, capacity, probs.data(), dest.data(), gate.data());
    std::vector<std::vector<int>> choice(tokens);
    for (int t = 0; t < tokens; ++t) {
      std::vector<int> order(experts);
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        return probs[t * experts + a] > probs[t * experts + b];
      });
      choice[t].assign(order.begin(), order.begin() + k);
    }
    std::vector<int> count(experts, 0);
    for (int j = 0; j < k; ++j) {
      for (int t = 0; t < tokens; ++t) {
        const int e = choice[t][j], pos = count[e]++;
        EXPECT_EQ(dest[t * k + j], pos < capacity ? e * capacity + pos : -1)
            << "trial " << trial << " token " << t << " choice " << j;
        EXPECT_EQ(gate[t * k + j], probs[t * experts + e]);
      }
    }
  }
}

TEST(CpuMoeOps, TopKRouteRefusesImpossibleArguments) {
  const std::vector<float> probs(6, 0.5f);
  std::vector<int32_t> dest(6);
  std::vector<float> gate(6);
  EXPECT_THROW(top_k_route(2, 3, 4, 1, probs.data(), dest.data(), gate.data()),
               std::invalid_argument);
  EXPECT_THROW(top_k_route(2, 3, 1, 0, probs.data(), dest.data(), gate.data()),
               std::invalid_argument);
}

// A routing with drops, for the data-movement and gradient tests.
struct Routed {
  int tokens = 9, experts = 4, k = 2, capacity = 3, cols = 5;
  std::vector<float> logits, probs, gate, x;
  std::vector<int32_t> dest;
  int slots() const { return experts * capacity; }
};

Routed routed(unsigned seed) {
  Routed r;
  r.logits = random_vector(size_t(r.tokens) * r.experts, seed);
  r.probs.resize(r.logits.size());
  softmax_rows(r.tokens, r.experts, r.logits.data(), r.probs.data());
  r.dest.resize(size_t(r.tokens) * r.k);
  r.gate.resize(r.dest.size());
  top_k_route(r.tokens, r.experts, r.k, r.capacity, r.probs.data(), r.dest.data(), r.gate.data());
  r.x = random_vector(size_t(r.tokens) * r.cols, seed + 1);
  return r;
}

TEST(CpuMoeOps, DispatchAndCombineMoveRowsAsTheLoopsDo) {
  const Routed r = routed(11);
  ASSERT_GT(std::count(r.dest.begin(), r.dest.end(), -1), 0) << "the case must drop a choice";
  std::vector<float> buffer(size_t(r.slots()) * r.cols, NAN);
  moe_dispatch(r.tokens, r.k, r.cols, r.slots(), r.x.data(), r.dest.data(), buffer.data());
  std::vector<float> want(buffer.size(), 0.0f);
  for (int i = 0; i < r.tokens * r.k; ++i) {
    if (r.dest[i] < 0) continue;
    for (int c = 0; c < r.cols; ++c) want[r.dest[i] * r.cols + c] = r.x[(i / r.k) * r.cols + c];
  }
  EXPECT_EQ(buffer, want);  // empty slots zero, not NaN

  const auto out = random_vector(buffer.size(), 12);
  for (const bool gated : {true, false}) {
    auto y = r.x;
    moe_combine(r.tokens, r.k, r.cols, out.data(), r.dest.data(), gated ? r.gate.data() : nullptr,
                y.data());
    for (int t = 0; t < r.tokens; ++t) {
      for (int c = 0; c < r.cols; ++c) {
        double s = r.x[t * r.cols + c];
        for (int j = 0; j < r.k; ++j) {
          const int d = r.dest[t * r.k + j];
          if (d >= 0) s += (gated ? r.gate[t * r.k + j] : 1.0) * out[d * r.cols + c];
        }
        EXPECT_NEAR(y[t * r.cols + c], s, 1e-5);
      }
    }
  }
}

// L(logits, buffer) = sum_t w[t] . combine(buffer)[t] with the routing held fixed (the choices
// are piecewise constant, so they carry no gradient): the gradients through the gates, the
// softmax and the buffer, against central differences in double.
TEST(CpuMoeOps, CombineAndRouterBackwardMatchFiniteDifferences) {
  const Routed r = routed(21);
  const auto buffer = random_vector(size_t(r.slots()) * r.cols, 22);
  const auto w = random_vector(size_t(r.tokens) * r.cols, 23);
  auto loss = [&](const std::vector<double>& logits, const std::vector<double>& buf) {
    double total = 0;
    for (int t = 0; t < r.tokens; ++t) {
      const auto p = softmax_ref(std::vector<double>(logits.begin() + t * r.experts,
                                                     logits.begin() + (t + 1) * r.experts));
      for (int j = 0; j < r.k; ++j) {
        const int d = r.dest[t * r.k + j];
        if (d < 0) continue;
        for (int c = 0; c < r.cols; ++c)
          total += w[t * r.cols + c] * p[d / r.capacity] * buf[d * r.cols + c];
      }
    }
    return total;
  };
  std::vector<float> d_buffer(buffer.size(), NAN), d_gate(r.dest.size(), NAN),
      d_logits(r.logits.size(), NAN);
  moe_combine_backward(r.tokens, r.k, r.cols, r.slots(), w.data(), buffer.data(), r.dest.data(),
                       r.gate.data(), d_buffer.data(), d_gate.data());
  router_backward(r.tokens, r.experts, r.k, r.capacity, r.probs.data(), r.dest.data(),
                  d_gate.data(), d_logits.data());
  const std::vector<double> z(r.logits.begin(), r.logits.end()), b(buffer.begin(), buffer.end());
  const double h = 1e-5;
  for (size_t i = 0; i < z.size(); ++i) {
    auto up = z, down = z;
    up[i] += h;
    down[i] -= h;
    EXPECT_NEAR(d_logits[i], (loss(up, b) - loss(down, b)) / (2 * h), 2e-5) << "logit " << i;
  }
  for (size_t i = 0; i < b.size(); ++i) {
    auto up = b, down = b;
    up[i] += h;
    down[i] -= h;
    EXPECT_NEAR(d_buffer[i], (loss(z, up) - loss(z, down)) / (2 * h), 2e-5) << "buffer " << i;
  }
  for (size_t i = 0; i < r.dest.size(); ++i) {
    if (r.dest[i] < 0) {
      EXPECT_EQ(d_gate[i], 0.0f) << "a dropped choice has no gate gradient";
    }
  }
}

}  // namespace
}  // namespace meshscope::kernels::cpu
