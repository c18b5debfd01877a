// The metadata a CUPTI-built timeline carries about how its GPU ops were labelled, checked in one
// call by the timeline and tracer tests.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "traces/timeline.h"

namespace meshscope::capture::cupti::testing {

struct LabelCounts {
  int gpu_ops = 0, by_external_id = 0, by_nvtx = 0, unlabelled = 0;
};

inline void expect_label_counts(const traces::Timeline& t, const LabelCounts& want) {
  const std::pair<const char*, int> keys[] = {{"cupti_gpu_ops", want.gpu_ops},
                                              {"cupti_ops_by_external_id", want.by_external_id},
                                              {"cupti_ops_by_nvtx", want.by_nvtx},
                                              {"cupti_ops_unlabelled", want.unlabelled}};
  for (const auto& [key, n] : keys) EXPECT_EQ(t.metadata.at(key), std::to_string(n)) << key;
}

}  // namespace meshscope::capture::cupti::testing
