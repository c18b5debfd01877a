// Collects completed buffers while running and decodes them all at stop(), off the hot path.
#include "profiler/capture/cupti/activity_capture.h"

#include <cstdio>
#include <exception>

#include "profiler/capture/cupti/decoder.h"

namespace meshscope::capture::cupti {

ActivityCapture::~ActivityCapture() {
  if (!running_) return;
  try {
    stop();
  } catch (...) {
    // Nothing to report to: the records are dropped with the capture.
  }
}

void ActivityCapture::start() {
  clock_.sample(api_);
  api_.start(kCapturedKinds, [this](CompletedBuffer b) { on_buffer(std::move(b)); });
  running_ = true;
}

void ActivityCapture::on_buffer(CompletedBuffer buffer) {
  std::lock_guard lock(mutex_);
  completed_.push_back(std::move(buffer));
}

RecordSet ActivityCapture::stop() {
  RecordSet records;
  if (!running_) return records;
  running_ = false;
  api_.stop();
  api_.flush();
  clock_.sample(api_);
  std::vector<CompletedBuffer> buffers;
  {
    std::lock_guard lock(mutex_);
    buffers.swap(completed_);
  }
  for (auto& b : buffers) {
    // A buffer CUPTI cannot walk loses its own records, not the run's: those decoded before the
    // error stay, and the buffer is counted as incomplete.
    try {
      decode_buffer(api_, b.buffer.data(), b.valid_bytes, records);
    } catch (const std::exception& e) {
      std::fprintf(stderr,
                   "meshscope: warning: a CUPTI activity buffer could not be read to its end: %s\n",
                   e.what());
      ++records.incomplete_buffers;
    }
    records.dropped_records += b.dropped;
    ++records.buffers;
  }
  return records;
}

}  // namespace meshscope::capture::cupti
