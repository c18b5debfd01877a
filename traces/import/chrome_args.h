// The args of a Chrome trace event that the importer reads, found in one pass, and how it reads
// their values (chrome_builder.cpp, chrome_builder_events.cpp).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

#include "traces/import/chrome_reader.h"

namespace meshscope::traces::importer {

// The args the importer looks at, found in one pass over the event's args.
struct ArgView {
  const JsonScalar* device = nullptr;
  const JsonScalar* stream = nullptr;
  const JsonScalar* stage = nullptr;
  const JsonScalar* microbatch = nullptr;
  const JsonScalar* phase = nullptr;
  const JsonScalar* bytes = nullptr;
  const JsonScalar* flops = nullptr;
  const JsonScalar* collective = nullptr;
  const JsonScalar* in_nelems = nullptr;
  const JsonScalar* out_nelems = nullptr;
  const JsonScalar* dtype = nullptr;
  const JsonScalar* group_size = nullptr;   // PyTorch's "Group size" of a collective
  const JsonScalar* group_ranks = nullptr;  // ... and its "Process Group Ranks" ("[0, 2]")
  const JsonScalar* external_id = nullptr;
  const JsonScalar* correlation = nullptr;
  const JsonScalar* span = nullptr;
  // meshscope's typed collective (chrome_export.h)
  const JsonScalar* collective_op = nullptr;
  const JsonScalar* collective_group = nullptr;
  const JsonScalar* collective_bytes = nullptr;
  const JsonScalar* collective_ranks = nullptr;
  const JsonScalar* collective_first_rank = nullptr;
  const JsonScalar* collective_rank_stride = nullptr;
  const JsonScalar* collective_algorithm = nullptr;
  const JsonScalar* waited_ns = nullptr;  // meshscope's SpanWait
};

ArgView scan_args(const ChromeEvent& ev);

// An integer arg (a JSON number or a string holding one; a whole double too); nullopt otherwise.
std::optional<int64_t> as_int(const JsonScalar* v);
// A string or number arg's text; empty for any other JSON type.
std::string_view as_text(const JsonScalar& v);

// v as T, or `fallback` when T cannot hold it.
template <typename T>
T clamp_to(int64_t v, T fallback) {
  if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max()) return fallback;
  return static_cast<T>(v);
}

}  // namespace meshscope::traces::importer
