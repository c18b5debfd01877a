// One CUPTI activity capture: enables the record kinds, keeps every completed buffer (CUPTI may
// complete them out of order and on its own thread), samples the clocks at both ends, and on
// stop() flushes, decodes and returns the records with the dropped count.
#pragma once

#include <mutex>
#include <vector>

#include "profiler/capture/cupti/clock_sync.h"
#include "profiler/capture/cupti/cupti_api.h"
#include "profiler/capture/cupti/records.h"

namespace meshscope::capture::cupti {

class ActivityCapture {
 public:
  explicit ActivityCapture(CuptiApi& api) : api_(api) {}
  ActivityCapture(const ActivityCapture&) = delete;
  ActivityCapture& operator=(const ActivityCapture&) = delete;
  ~ActivityCapture();

  // Throws std::runtime_error when CUPTI refuses (e.g. another profiler holds it).
  void start();
  // Disables the kinds, forces the last buffers out, takes the closing clock pair and decodes.
  RecordSet stop();
  bool running() const { return running_; }
  const ClockSync& clock() const { return clock_; }
  CuptiApi& api() { return api_; }

 private:
  void on_buffer(CompletedBuffer buffer);

  CuptiApi& api_;
  ClockSync clock_;
  bool running_ = false;
  std::mutex mutex_;  // completed_ is filled from CUPTI's thread
  std::vector<CompletedBuffer> completed_;
};

}  // namespace meshscope::capture::cupti
