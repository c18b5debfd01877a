// Find spans by name, kind, phase, microbatch or stage: the query language of the timeline's
// search box (docs/GUI.md, "Find queries").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "traces/timeline.h"

namespace meshscope::gui {

// A query is words separated by spaces, all of which must hold (any case):
//   mb 3, mb=3, mb3, #3   the span's microbatch is 3
//   stage 1, stage=1      its pipeline stage is 1
//   word                  a whole word of its name (words are runs of letters, digits and `_`:
//                         `B` matches "B s0 mb3" but not "mb3"), or its kind (compute, send,
//                         recv, collective, memcpy, memset, host, annotation, idle; `bubble` is
//                         idle), or its phase by name or letter (forward/F, backward/B,
//                         input_grad/I, weight_grad/W, optimizer/O)
//   pat*tern              `*` matches any characters inside one word: `nccl*` or `*allreduce*`
struct FindQuery {
  std::optional<int> microbatch;
  std::optional<int> stage;
  std::vector<std::string> words;  // lower case
  bool empty() const { return !microbatch && !stage && words.empty(); }
};
FindQuery parse_find_query(std::string_view text);

// Matching spans, ordered by begin time (then device), at most `limit` of them; idle spans match
// only a query that names them ("idle", "bubble" is an alias). Returns whether the list is whole.
bool find_spans(const traces::Timeline& t, const FindQuery& q, size_t limit,
                std::vector<uint32_t>& out);

// `word` (lower case, `*` a wildcard) against one whole word of `name` (any case).
bool matches_word(std::string_view name, std::string_view word);

}  // namespace meshscope::gui
