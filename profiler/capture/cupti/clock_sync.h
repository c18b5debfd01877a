// Maps CUPTI timestamps onto the host clock (runtime::host_now_ns) from paired samples. CUPTI's
// clock need not be the host's monotonic clock (without a driver it reads CLOCK_REALTIME-like
// values), and the two may drift apart over a long capture, so a line is fitted through pairs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace meshscope::capture::cupti {

class CuptiApi;

struct ClockPair {
  int64_t cupti_ns = 0;
  int64_t host_ns = 0;
};

class ClockSync {
 public:
  void add(ClockPair pair) { pairs_.push_back(pair); }
  // Reads both clocks a few times and keeps the pair with the tightest host bracket.
  void sample(CuptiApi& api);
  // host = host_0 + offset + slope * (cupti - cupti_0), least squares over the pairs (slope 1
  // with one pair; identity with none).
  int64_t to_host(int64_t cupti_ns) const;
  // Drift in parts per million ((slope - 1) * 1e6) and the offset at the first pair.
  double drift_ppm() const;
  int64_t offset_ns() const;
  size_t size() const { return pairs_.size(); }

 private:
  struct Fit {
    double slope = 1;
    double intercept = 0;  // relative to the first pair
  };
  Fit fit() const;
  std::vector<ClockPair> pairs_;
};

}  // namespace meshscope::capture::cupti
