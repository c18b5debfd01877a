// A streaming JSON tokenizer over a chunk buffer: the caller parses one bounded unit (a trace
// event, a top-level member) at a time from contiguous memory; a unit that runs past the bytes in
// the buffer throws NeedMoreInput, the caller refills and parses the unit again. No recursion:
// nesting is bounded by ImportOptions::max_depth.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "traces/import/byte_source.h"
#include "traces/import/import_types.h"

namespace meshscope::traces::importer {

// Thrown when a unit crosses the end of the buffered bytes; never escapes the importer.
struct NeedMoreInput {};

enum class JsonType : uint8_t {
  kAbsent = 0,
  kString,
  kNumber,
  kTrue,
  kFalse,
  kNull,
  kObject,
  kArray
};

// A value as read: strings unescaped, numbers as their text (parsed only when someone asks),
// objects and arrays skipped (their type only). Views die with the unit they came from.
struct JsonScalar {
  JsonType type = JsonType::kAbsent;
  std::string_view text;
  bool present() const { return type != JsonType::kAbsent; }
  bool is_string() const { return type == JsonType::kString; }
  bool is_number() const { return type == JsonType::kNumber; }
};

// The bytes of the file held for parsing: a window that slides over the stream.
class ChunkBuffer {
 public:
  static constexpr size_t kPadding = 64;  // zero bytes after the data: scans need no bounds check
  ChunkBuffer(ByteSource& source, size_t chunk_bytes, int64_t max_unit_bytes);
  const char* data() const { return data_.get(); }
  const char* end() const { return data_.get() + size_; }
  size_t capacity() const { return capacity_; }
  int64_t offset_of(const char* p) const { return base_offset_ + (p - data_.get()); }
  // Drops the bytes before `keep`, reads more behind the rest and moves `keep` to the new address.
  // Returns false at the end of the stream (nothing more came). Throws std::length_error when one
  // unit would need more than max_unit_bytes.
  bool refill(const char*& keep);

 private:
  ByteSource& source_;
  std::unique_ptr<char[]> data_;
  size_t capacity_ = 0;
  size_t size_ = 0;
  int64_t base_offset_ = 0;
  int64_t max_unit_bytes_ = 0;
  bool eof_ = false;
};

// Token-level reading inside the buffer. All positions must lie in [data(), end()].
class JsonScanner {
 public:
  JsonScanner(ChunkBuffer& buffer, std::string file, int max_depth);

  const char* pos() const { return p_; }
  void set_pos(const char* p) { p_ = p; }
  void begin_unit() { arena_used_ = 0; }  // unescaped strings of the previous unit die here
  void on_refill();                       // call after ChunkBuffer::refill

  void skip_ws();
  char peek_after_ws() {
    skip_ws();
    return *p_;
  }
  // Consumes `c` after whitespace, or fails with "expected <what>".
  void expect(char c, const char* what);
  // Consumes `c` after whitespace if it is there; throws NeedMoreInput at the end of the buffer.
  bool consume_if(char c);

  std::string_view string();            // at '"': the unescaped text
  std::string_view number();            // at a number (also NaN, Infinity, -Infinity): its text
  JsonScalar value_or_skip(int depth);  // scalars read; objects and arrays skipped
  void skip_value(int depth);

  [[noreturn]] void fail(const char* at, const std::string& reason) const;
  [[noreturn]] void fail_here(const std::string& reason) const { fail(p_, reason); }
  int64_t offset_of(const char* p) const { return buffer_.offset_of(p); }
  const std::string& file() const { return file_; }
  int max_depth() const { return max_depth_; }

 private:
  template <bool kStore>
  std::string_view string_impl();
  const char* utf8_sequence(const char* s) const;
  void literal(std::string_view word);

  ChunkBuffer& buffer_;
  std::string file_;
  int max_depth_;
  const char* p_ = nullptr;
  std::unique_ptr<char[]> arena_;
  size_t arena_capacity_ = 0;
  size_t arena_used_ = 0;
  std::vector<char> open_;  // skip_value's stack, kept to avoid an allocation per call
};

// Number text -> value. Decimal microseconds -> integer nanoseconds exactly (rounded half away
// from zero below the ns); false when not finite or out of int64 range.
bool micros_text_to_ns(std::string_view text, int64_t& ns);
bool number_text_to_int(std::string_view text, int64_t& out);    // integers only
bool number_text_to_double(std::string_view text, double& out);  // false for NaN/Infinity/range

}  // namespace meshscope::traces::importer
