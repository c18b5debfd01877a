// Distance of a run from the single-device reference (see equivalence.h).
#include "profiler/exec/equivalence.h"

#include <algorithm>
#include <cmath>

namespace meshscope::exec {

double relative_error(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return INFINITY;
  double diff = 0, mag = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!std::isfinite(a[i]) || !std::isfinite(b[i])) return INFINITY;
    diff = std::max(diff, std::abs(static_cast<double>(a[i]) - b[i]));
    mag = std::max(mag, std::abs(static_cast<double>(b[i])));
  }
  return mag > 0 ? diff / mag : diff;
}

double max_relative_error(const RunResult& got, const ReferenceResult& want) {
  if (got.losses.size() != want.losses.size() || got.weights.size() != want.weights.size()) {
    return INFINITY;
  }
  double err = 0;
  for (size_t s = 0; s < want.losses.size(); ++s) {
    if (!std::isfinite(got.losses[s]) || !std::isfinite(want.losses[s])) return INFINITY;
    const double mag = std::max(std::abs(want.losses[s]), 1e-30);
    err = std::max(err, std::abs(got.losses[s] - want.losses[s]) / mag);
  }
  for (size_t i = 0; i < want.weights.size(); ++i) {
    err = std::max(err, relative_error(got.weights[i].w, want.weights[i].w));
    err = std::max(err, relative_error(got.weights[i].b, want.weights[i].b));
  }
  // A NaN in a replica's copy makes replica_error NaN, which std::max would skip.
  if (!(got.replica_error >= 0)) return INFINITY;
  return std::max(err, got.replica_error);
}

bool finite(const ReferenceResult& reference) {
  const auto all = [](const std::vector<float>& v) {
    return std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); });
  };
  for (const double loss : reference.losses)
    if (!std::isfinite(loss)) return false;
  for (const auto& w : reference.weights)
    if (!all(w.w) || !all(w.b)) return false;
  return true;
}

}  // namespace meshscope::exec
