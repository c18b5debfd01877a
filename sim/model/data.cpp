// Teacher-generated synthetic batches.
#include "sim/model/data.h"

#include <cmath>

#include "sim/model/rng.h"

namespace meshscope::model {
namespace {

constexpr uint64_t kTeacherStream = 0x7eac4e7;
constexpr uint64_t kDataStream = 0xda7a;
// Prototype pixels are N(0, 1/sqrt(10)) x this against N(0, 1) noise: separable, not trivial.
constexpr double kPrototypeScale = 1.0;

std::vector<float> teacher(const Workload& w, int in, int out) {
  Rng r({w.spec.seed, kTeacherStream});
  std::vector<float> t(size_t(in) * out);
  const double scale = 1.0 / std::sqrt(static_cast<double>(in));
  for (float& x : t) x = static_cast<float>(r.normal() * scale);
  return t;
}

// y[row] = x[row] T, in double.
std::vector<double> apply(const std::vector<float>& x, const std::vector<float>& t, int rows,
                          int in, int out) {
  std::vector<double> y(size_t(rows) * out, 0.0);
  for (int r = 0; r < rows; ++r) {
    for (int k = 0; k < in; ++k) {
      const double xv = x[size_t(r) * in + k];
      for (int c = 0; c < out; ++c) y[size_t(r) * out + c] += xv * t[size_t(k) * out + c];
    }
  }
  return y;
}

}  // namespace

Batch make_batch(const Workload& w, int step) {
  Batch b;
  b.rows = w.spec.batch;
  const int in = w.input_dim, out = w.output_dim;
  b.inputs.resize(size_t(b.rows) * in);
  Rng r({w.spec.seed, kDataStream, static_cast<uint64_t>(step)});
  switch (w.spec.kind) {
    case WorkloadKind::kChain:
      for (float& x : b.inputs) x = static_cast<float>(r.uniform(-1.0, 1.0));
      b.targets.resize(b.rows);
      for (int i = 0; i < b.rows; ++i) b.targets[i] = 3.0f * b.inputs[i] - 1.0f;
      break;
    case WorkloadKind::kClassifier: {
      // Like digits: each class has a fixed random prototype image (the teacher), a sample is its
      // class's prototype plus pixel noise, so the labels are learnable from the pixels.
      const auto proto = teacher(w, out, in);  // out x in
      b.labels.resize(b.rows);
      for (int i = 0; i < b.rows; ++i) {
        const int label = static_cast<int>(r.next() % static_cast<uint64_t>(out));
        b.labels[i] = label;
        for (int k = 0; k < in; ++k) {
          b.inputs[size_t(i) * in + k] =
              static_cast<float>(kPrototypeScale * proto[size_t(label) * in + k] + r.normal());
        }
      }
      break;
    }
    case WorkloadKind::kMlp:
    case WorkloadKind::kMoe:
    case WorkloadKind::kCount: {
      for (float& x : b.inputs) x = static_cast<float>(r.normal());
      const auto y = apply(b.inputs, teacher(w, in, out), b.rows, in, out);
      b.targets.resize(y.size());
      for (size_t i = 0; i < y.size(); ++i) b.targets[i] = static_cast<float>(std::tanh(y[i]));
      break;
    }
  }
  return b;
}

}  // namespace meshscope::model
