// The structure of a Chrome Trace Event Format file — object form {"traceEvents": [...], ...} or
// bare array form — read in a stream: each trace event and each other top-level member is handed
// to a sink as soon as it is read, and nothing is kept.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "traces/import/byte_source.h"
#include "traces/import/import_types.h"
#include "traces/import/json_reader.h"

namespace meshscope::traces::importer {

struct ChromeArg {
  std::string_view key;
  JsonScalar value;
  std::string_view raw;  // the member's JSON text, key and value (`"cbid": 211`)
};

// One trace event. Views die when the sink returns.
struct ChromeEvent {
  static constexpr uint32_t kMaxArgs = 64;  // further args are read and dropped

  JsonScalar ph, name, cat, ts, dur, pid, tid, id, bp;
  JsonType args_type = JsonType::kAbsent;  // kObject when "args" was an object
  const ChromeArg* args = nullptr;
  uint32_t arg_count = 0;
  bool args_truncated = false;  // more than kMaxArgs members: raw holds only the first ones
  int64_t offset = 0;           // byte where the event starts

  const JsonScalar* arg(std::string_view key) const {
    for (uint32_t i = 0; i < arg_count; ++i) {
      if (args[i].key == key) return &args[i].value;
    }
    return nullptr;
  }
};

// A top-level member other than traceEvents: a scalar, or an object's flat members (nested
// values are skipped and show as kObject/kArray).
struct ChromeMember {
  std::string_view key;
  JsonScalar value;  // kObject: see members
  const ChromeArg* members = nullptr;
  uint32_t member_count = 0;
  std::string_view raw;  // the value's JSON text, for members worth a full parse
  int64_t offset = 0;

  const JsonScalar* member(std::string_view k) const {
    for (uint32_t i = 0; i < member_count; ++i) {
      if (members[i].key == k) return &members[i].value;
    }
    return nullptr;
  }
};

class ChromeSink {
 public:
  virtual ~ChromeSink() = default;
  virtual void on_event(const ChromeEvent& event) = 0;
  virtual void on_member(const ChromeMember& member) = 0;
};

struct ChromeReadSummary {
  bool object_form = false;
  bool has_trace_events = false;  // array form, or object form with a traceEvents array
  uint64_t events = 0;
};

// Reads the whole stream. Throws ImportError "FILE: byte N: reason" on malformed JSON, truncation,
// nesting deeper than options.max_depth, or one event larger than options.max_event_bytes.
ChromeReadSummary read_chrome_json(ByteSource& source, const std::string& file,
                                   const ImportOptions& options, ChromeSink& sink,
                                   ImportReport& report);

// For readers that take Kineto JSON only: opens `file` (or `memory` when non-null; gzip undone) and
// reads it into `sink` as read_chrome_json does, after refusing an Nsight Systems SQLite export
// with ImportError(display_name, "", sqlite_refusal).
void read_json_trace(const std::filesystem::path& file, const std::string_view* memory,
                     const std::string& display_name, const ImportOptions& options,
                     ChromeSink& sink, const std::string& sqlite_refusal);

}  // namespace meshscope::traces::importer
