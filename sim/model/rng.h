// A small deterministic random generator (splitmix64) whose streams are keyed by integers, so the
// same (seed, layer, what) gives the same numbers on every platform and in every partition.
#pragma once

#include <cmath>
#include <cstdint>
#include <initializer_list>

namespace meshscope::model {

class Rng {
 public:
  // One stream per key: Rng({seed, layer, 3}) never depends on what other streams drew.
  Rng(std::initializer_list<uint64_t> key) {
    for (uint64_t k : key) state_ = mix(state_ ^ (k + 0x9e3779b97f4a7c15ULL));
  }

  uint64_t next() {
    state_ += 0x9e3779b97f4a7c15ULL;
    return mix(state_);
  }
  // Uniform in [0, 1) with 24 random bits (exact in float).
  double uniform() { return static_cast<double>(next() >> 40) * (1.0 / 16777216.0); }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  // Standard normal (Box-Muller), computed in double so every platform agrees to the last bit
  // that matters for a float.
  double normal() {
    const double u1 = (static_cast<double>(next() >> 11) + 1.0) * (1.0 / 9007199254740992.0);
    const double u2 = static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0);
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  static uint64_t mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  uint64_t state_ = 0x6a09e667f3bcc909ULL;
};

}  // namespace meshscope::model
