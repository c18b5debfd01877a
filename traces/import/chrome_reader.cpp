// The Chrome trace structure as a small state machine over units (one event, one top-level
// member, one separator). A unit that crosses the buffered bytes is parsed again after a refill,
// so the scanner works on contiguous memory and never recurses or backtracks across chunks.
#include "traces/import/chrome_reader.h"

#include <cstring>
#include <map>
#include <stdexcept>
#include <string>

#include "traces/printable.h"

namespace meshscope::traces::importer {
namespace {

// Big enough that refills are rare, small enough to stay in L2 and to make tiny inputs cheap.
constexpr size_t kChunkBytes = size_t{256} << 10;

// Nesting depth of a traceEvents element's members in the object form; the array form is one
// shallower, which only makes the bound slightly looser.
constexpr int kEventMemberDepth = 3;

enum class State : uint8_t {
  kStart,
  kTopFirstMember,  // after '{': a member or '}'
  kTopMember,
  kTopAfterMember,  // ',' or '}'
  kEventsFirst,     // after '[': an event or ']'
  kEvent,
  kEventsAfter,  // ',' or ']'
  kTrailer,      // after the document: only whitespace may follow
};

class ChromeReader {
 public:
  ChromeReader(ByteSource& source, const std::string& file, const ImportOptions& options,
               ChromeSink& sink, ImportReport& report)
      : buffer_(source, kChunkBytes, options.max_event_bytes),
        scan_(buffer_, file, options.max_depth),
        file_(file),
        max_event_bytes_(options.max_event_bytes),
        sink_(sink),
        report_(report) {}

  ChromeReadSummary run() {
    for (;;) {
      // Whitespace between units is consumed on its own, so a long run of it never has to fit
      // in the buffer together with the next unit.
      scan_.skip_ws();
      const char* unit_start = scan_.pos();
      try {
        scan_.begin_unit();
        if (!step()) break;
      } catch (const NeedMoreInput&) {
        const char* keep = unit_start;
        bool more = false;
        try {
          more = buffer_.refill(keep);
        } catch (const std::length_error&) {
          throw ImportError(file_, buffer_.offset_of(unit_start),
                            "a trace event larger than " + std::to_string(max_event_bytes_) +
                                " bytes (ImportOptions::max_event_bytes)");
        }
        scan_.on_refill();
        scan_.set_pos(keep);
        if (!more) {
          finish_at_end_of_stream();
          break;
        }
      }
    }
    return summary_;
  }

 private:
  // Parses one unit at the scanner's position; false when the document is complete.
  bool step() {
    switch (state_) {
      case State::kStart:
        return start();
      case State::kTopFirstMember:
        if (scan_.consume_if('}')) {
          state_ = State::kTrailer;
          return true;
        }
        state_ = State::kTopMember;
        return true;
      case State::kTopMember:
        return top_member();
      case State::kTopAfterMember:
        if (scan_.consume_if(',')) {
          state_ = State::kTopMember;
        } else if (scan_.consume_if('}')) {
          state_ = State::kTrailer;
        } else {
          scan_.fail_here("expected ',' or '}' after a top-level member");
        }
        return true;
      case State::kEventsFirst:
        if (scan_.consume_if(']')) {
          end_of_events();
        } else {
          state_ = State::kEvent;
        }
        return true;
      case State::kEvent:
        return event();
      case State::kEventsAfter:
        if (scan_.consume_if(',')) {
          // A trailing comma before ']' is what streaming writers leave; accept it.
          if (scan_.consume_if(']')) {
            end_of_events();
          } else {
            state_ = State::kEvent;
          }
        } else if (scan_.consume_if(']')) {
          end_of_events();
        } else {
          scan_.fail_here("expected ',' or ']' after a trace event");
        }
        return true;
      case State::kTrailer:
        scan_.skip_ws();
        if (scan_.pos() < buffer_.end()) scan_.fail_here("unexpected content after the trace");
        throw NeedMoreInput{};  // only the end of the stream completes the document
    }
    return false;
  }

  bool start() {
    scan_.skip_ws();
    const char* p = scan_.pos();
    if (*p == '\xEF' && buffer_.end() - p < 3) throw NeedMoreInput{};  // maybe a BOM
    if (std::memcmp(p, "\xEF\xBB\xBF", 3) == 0) {
      scan_.set_pos(p + 3);  // a UTF-8 byte order mark
      scan_.skip_ws();
      p = scan_.pos();
    }
    if (*p == '{') {
      summary_.object_form = true;
      state_ = State::kTopFirstMember;
    } else if (*p == '[') {
      summary_.has_trace_events = true;
      state_ = State::kEventsFirst;
    } else {
      scan_.fail_here("not a Chrome trace: expected '{' or '[' at the start");
    }
    scan_.set_pos(p + 1);
    return true;
  }

  bool top_member() {
    ChromeMember m;
    m.offset = scan_.offset_of(scan_.pos());
    m.key = scan_.string();
    scan_.expect(':', "':' after a key");
    // A top-level key given twice (two traceEvents arrays, two distributedInfo) had been read as
    // both, or as the last: which is the trace is not the reader's to guess, as hand-written
    // JSON's reader refuses it too. (A member read again after more input came has its offset.)
    if (const auto [it, fresh] = top_keys_.emplace(std::string(m.key), m.offset);
        !fresh && it->second != m.offset) {
      scan_.fail_here("key '" + printable(m.key, 40) + "' given twice (bytes " +
                      std::to_string(it->second) + " and " + std::to_string(m.offset) + ")");
    }
    if (m.key == "traceEvents") {
      if (scan_.peek_after_ws() != '[') scan_.fail_here("traceEvents is not an array");
      scan_.set_pos(scan_.pos() + 1);
      summary_.has_trace_events = true;
      state_ = State::kEventsFirst;
      return true;
    }
    scan_.skip_ws();
    const char* value_start = scan_.pos();
    if (scan_.peek_after_ws() == '{') {
      m.value.type = JsonType::kObject;
      m.member_count = flat_object(2);
      m.members = members_.data();
    } else {
      m.value = scan_.value_or_skip(1);
    }
    m.raw = std::string_view(value_start, static_cast<size_t>(scan_.pos() - value_start));
    state_ = State::kTopAfterMember;
    sink_.on_member(m);
    return true;
  }

  // Reads an object's members into members_ (scalars; nested values skipped); returns the count.
  uint32_t flat_object(int depth, bool* truncated = nullptr) {
    scan_.expect('{', "'{'");
    uint32_t n = 0;
    if (scan_.consume_if('}')) return 0;
    for (;;) {
      scan_.skip_ws();
      const char* start = scan_.pos();
      const std::string_view key = scan_.string();
      scan_.expect(':', "':' after a key");
      const JsonScalar v = scan_.value_or_skip(depth);
      const std::string_view raw(start, static_cast<size_t>(scan_.pos() - start));
      if (n < ChromeEvent::kMaxArgs) {
        members_[n++] = ChromeArg{key, v, raw};
      } else if (truncated != nullptr) {
        *truncated = true;
      }
      if (scan_.consume_if(',')) continue;
      if (scan_.consume_if('}')) return n;
      scan_.fail_here("expected ',' or '}' in object");
    }
  }

  bool event() {
    ChromeEvent ev;
    if (scan_.peek_after_ws() != '{') scan_.fail_here("a trace event is not an object");
    ev.offset = scan_.offset_of(scan_.pos());
    scan_.set_pos(scan_.pos() + 1);
    if (!scan_.consume_if('}')) {
      for (;;) {
        const std::string_view key = scan_.string();
        scan_.expect(':', "':' after a key");
        if (JsonScalar* field = field_for(ev, key)) {
          *field = scan_.value_or_skip(kEventMemberDepth);
        } else if (key == "args") {
          if (scan_.peek_after_ws() == '{') {
            ev.args_type = JsonType::kObject;
            ev.arg_count = flat_object(kEventMemberDepth + 1, &ev.args_truncated);
            ev.args = members_.data();
          } else {
            ev.args_type = scan_.value_or_skip(kEventMemberDepth).type;
          }
        } else {
          scan_.skip_value(kEventMemberDepth);
        }
        if (scan_.consume_if(',')) continue;
        if (scan_.consume_if('}')) break;
        scan_.fail_here("expected ',' or '}' in a trace event");
      }
    }
    state_ = State::kEventsAfter;
    ++summary_.events;
    ++report_.events_read;
    sink_.on_event(ev);
    return true;
  }

  static JsonScalar* field_for(ChromeEvent& ev, std::string_view key) {
    switch (key.size()) {
      case 2:
        if (key == "ph") return &ev.ph;
        if (key == "ts") return &ev.ts;
        if (key == "id") return &ev.id;
        if (key == "bp") return &ev.bp;
        return nullptr;
      case 3:
        if (key == "pid") return &ev.pid;
        if (key == "tid") return &ev.tid;
        if (key == "dur") return &ev.dur;
        if (key == "cat") return &ev.cat;
        return nullptr;
      case 4:
        if (key == "name") return &ev.name;
        return nullptr;
      default:
        return nullptr;
    }
  }

  void end_of_events() { state_ = summary_.object_form ? State::kTopAfterMember : State::kTrailer; }

  // At the end of the stream: returns when the document is complete (or acceptably unclosed).
  void finish_at_end_of_stream() {
    const char* p = scan_.pos();
    const auto skip_ws = [&] {
      while (p < buffer_.end() && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) ++p;
    };
    skip_ws();
    if (!summary_.object_form && state_ == State::kEventsAfter && p < buffer_.end() && *p == ',') {
      ++p;  // an unclosed array's last event is usually followed by its comma
      skip_ws();
    }
    const bool only_whitespace_left = p >= buffer_.end();
    if (state_ == State::kTrailer && only_whitespace_left) return;
    const bool between_events =
        state_ == State::kEventsFirst || state_ == State::kEvent || state_ == State::kEventsAfter;
    if (!summary_.object_form && between_events && only_whitespace_left) {
      // The Trace Event Format lets the array form end without ']' (a writer that crashed).
      report_.warn(ImportWarning::kArrayNotClosed, buffer_.offset_of(buffer_.end()));
      return;
    }
    if (state_ == State::kStart && only_whitespace_left) {
      throw ImportError(file_, buffer_.offset_of(buffer_.end()), "empty file: not a trace");
    }
    throw ImportError(file_, buffer_.offset_of(buffer_.end()),
                      state_ == State::kEvent
                          ? "unexpected end of file inside the trace event that starts at byte " +
                                std::to_string(buffer_.offset_of(scan_.pos())) + " (truncated?)"
                          : std::string("unexpected end of file (truncated?)"));
  }

  ChunkBuffer buffer_;
  JsonScanner scan_;
  std::string file_;
  int64_t max_event_bytes_;
  ChromeSink& sink_;
  ImportReport& report_;
  State state_ = State::kStart;
  ChromeReadSummary summary_;
  std::map<std::string, int64_t, std::less<>> top_keys_;  // each top-level key, at its byte
  std::array<ChromeArg, ChromeEvent::kMaxArgs> members_{};
};

}  // namespace

ChromeReadSummary read_chrome_json(ByteSource& source, const std::string& file,
                                   const ImportOptions& options, ChromeSink& sink,
                                   ImportReport& report) {
  ChromeReader reader(source, file, options, sink, report);
  return reader.run();
}

void read_json_trace(const std::filesystem::path& file, const std::string_view* memory,
                     const std::string& display_name, const ImportOptions& options,
                     ChromeSink& sink, const std::string& sqlite_refusal) {
  OpenedTrace opened = open_trace_source(file, memory, display_name, options);
  if (has_sqlite_magic(opened.source->peek(kSqliteMagic.size())))
    throw ImportError(display_name, "", sqlite_refusal);
  ImportReport report;
  read_chrome_json(*opened.source, display_name, options, sink, report);
}

}  // namespace meshscope::traces::importer
