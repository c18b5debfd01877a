// Find spans by name or microbatch: the query language of the timeline's search box.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "traces/timeline.h"

namespace meshscope::gui {

// "mb 3", "mb=3", "mb3" or "#3" select microbatch 3; the remaining words must all appear in the
// span's name, ignoring case ("F mb 2" finds forwards of microbatch 2 whose name holds "f").
struct FindQuery {
  std::optional<int> microbatch;
  std::vector<std::string> words;  // lower case
  bool empty() const { return !microbatch && words.empty(); }
};
FindQuery parse_find_query(std::string_view text);

// Matching spans, ordered by begin time (then device), at most `limit` of them; idle spans match
// only a query that names them ("idle", "bubble" is an alias). Returns whether the list is whole.
bool find_spans(const traces::Timeline& t, const FindQuery& q, size_t limit,
                std::vector<uint32_t>& out);

}  // namespace meshscope::gui
