// Finds the schedule action behind a GPU record: first through the external correlation id CUPTI
// linked to the launching API call, then through the meshscope NVTX range that encloses that call
// on its host thread (the range's payload holds the same id). Ranges of other NVTX domains are
// kept for the Timeline as plain annotations.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "profiler/capture/cupti/external_id.h"
#include "profiler/capture/cupti/records.h"

namespace meshscope::capture::cupti {

// An NVTX push/pop range rebuilt from its start and end marker records (CUPTI clock).
struct NvtxRange {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  uint32_t thread = 0;
  std::string name;
  std::string domain;
  std::optional<uint64_t> payload;
};

enum class LabelSource : uint8_t { kExternalId = 0, kNvtx = 1, kNone = 2, kCount };

struct Label {
  std::optional<ExternalKey> key;
  LabelSource source = LabelSource::kNone;
  std::optional<uint32_t> thread;  // host thread of the launching API call, when known
};

class RecordLabeler {
 public:
  RecordLabeler(const RecordSet& records, std::string_view domain);

  Label label(uint32_t correlation) const;
  // Ranges whose start and end were both seen, per thread, ordered by begin.
  const std::vector<NvtxRange>& ranges() const { return all_ranges_; }
  // Ranges of which only one end arrived (the other was dropped or the range never closed).
  size_t unmatched_markers() const { return unmatched_; }

 private:
  std::optional<ExternalKey> enclosing_action(uint32_t thread, int64_t t_ns) const;

  std::string domain_;
  std::unordered_map<uint32_t, uint64_t> external_;  // correlation -> external id
  struct CallSite {
    uint32_t thread;
    int64_t begin_ns;
  };
  std::unordered_map<uint32_t, CallSite> calls_;  // correlation -> launching call
  std::vector<NvtxRange> all_ranges_;
  // Per thread: indices into all_ranges_ of our domain's ranges with a payload, by begin.
  std::unordered_map<uint32_t, std::vector<size_t>> by_thread_;
  size_t unmatched_ = 0;
};

}  // namespace meshscope::capture::cupti
