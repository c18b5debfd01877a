// Trace bytes in chunks from a file or from memory, inflating gzip on the fly under caps that
// stop gzip bombs. Nothing here holds more than one chunk of the file at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "traces/import/import_types.h"

namespace meshscope::traces::importer {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Copies up to `max_bytes` into `dst`; returns how many, 0 only at the end. Throws ImportError.
  virtual size_t read(char* dst, size_t max_bytes) = 0;
};

std::unique_ptr<ByteSource> open_file_source(const std::filesystem::path& file);
// `bytes` must outlive the source.
std::unique_ptr<ByteSource> open_memory_source(std::string_view bytes);

inline bool has_gzip_magic(std::string_view head) {
  return head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
         static_cast<unsigned char>(head[1]) == 0x8b;
}
inline constexpr std::string_view kSqliteMagic{"SQLite format 3\0", 16};
inline bool has_sqlite_magic(std::string_view head) { return head.starts_with(kSqliteMagic); }

// Inflates gzip (also concatenated members) from `compressed`. Errors name `file` and the offset
// into the inflated stream; options.max_inflated_bytes and max_inflate_ratio bound the output.
std::unique_ptr<ByteSource> open_gzip_source(std::unique_ptr<ByteSource> compressed,
                                             const std::string& file, const ImportOptions& options);

// A source whose first bytes can be looked at before they are consumed.
class PeekableSource : public ByteSource {
 public:
  explicit PeekableSource(std::unique_ptr<ByteSource> inner) : inner_(std::move(inner)) {}
  // Up to `n` first bytes (fewer only when the content is shorter).
  std::string_view peek(size_t n);
  size_t read(char* dst, size_t max_bytes) override;

 private:
  std::unique_ptr<ByteSource> inner_;
  std::string head_;
  size_t head_pos_ = 0;
};

// Opens `file` or `memory` (when non-null) and undoes gzip when its magic is there.
struct OpenedTrace {
  std::unique_ptr<PeekableSource> source;  // the (inflated) content
  bool gzip = false;
};
OpenedTrace open_trace_source(const std::filesystem::path& file, const std::string_view* memory,
                              const std::string& display_name, const ImportOptions& options);

}  // namespace meshscope::traces::importer
