// A Timeline as bytes and back, exactly (every device, lane, span, flow, counter, step, string and
// metadata entry): how the processes of a multi-process run send their part to process 0.
#pragma once

#include <string>
#include <string_view>

#include "traces/timeline.h"

namespace meshscope::traces {

std::string encode_timeline(const Timeline& timeline);
// Throws std::runtime_error (naming the byte offset) on bytes encode_timeline did not write.
Timeline decode_timeline(std::string_view bytes);

}  // namespace meshscope::traces
