// Helpers for the importer tests: gzip in memory, temporary files that clean up after themselves,
// a byte source that hands out one byte at a time, and short trace-event builders.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>

#include "traces/import/byte_source.h"

namespace meshscope::traces::testing {

inline std::string gzip_bytes(std::string_view raw, int level = 6) {
  z_stream z{};
  if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw std::runtime_error("deflateInit2");
  }
  std::string out(deflateBound(&z, raw.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
  z.avail_in = static_cast<uInt>(raw.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// A gzip-compressed file's contents (a fixture stored compressed).
inline std::string read_gz(const std::filesystem::path& file) {
  gzFile in = gzopen(file.c_str(), "rb");
  if (in == nullptr) throw std::runtime_error("cannot open " + file.string());
  std::string out;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(in, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  gzclose(in);
  return out;
}

// `prefix`, then `megabytes` MiB of `fill`, as concatenated gzip members (a valid .gz): one
// member of 1 MiB compressed once and repeated, so a bomb costs nothing to build.
inline std::string gzip_repeated(std::string_view prefix, char fill, size_t megabytes) {
  const std::string member = gzip_bytes(std::string(size_t{1} << 20, fill), 9);
  std::string out = gzip_bytes(prefix);
  out.reserve(out.size() + member.size() * megabytes);
  for (size_t i = 0; i < megabytes; ++i) out += member;
  return out;
}

// A file under the system temp folder, removed when the object dies.
class TempFile {
 public:
  explicit TempFile(std::string_view suffix, std::string_view contents = {}) {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() / ("meshscope_import_" + std::to_string(rd()) +
                                                      std::to_string(rd()) + std::string(suffix));
    if (!contents.empty()) write(contents);
  }
  ~TempFile() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  void write(std::string_view contents) const {
    std::ofstream out(path_, std::ios::binary);
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Hands out one byte per read: every token of every unit crosses a chunk boundary.
class TrickleSource : public importer::ByteSource {
 public:
  explicit TrickleSource(std::string_view bytes) : bytes_(bytes) {}
  size_t read(char* dst, size_t max_bytes) override {
    if (pos_ >= bytes_.size() || max_bytes == 0) return 0;
    *dst = bytes_[pos_++];
    return 1;
  }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
};

// {"traceEvents": [ events... ]} with the events joined by commas.
inline std::string trace_of(std::initializer_list<std::string_view> events,
                            std::string_view extra_members = "") {
  std::string out = "{";
  if (!extra_members.empty()) {
    out += extra_members;
    out += ",";
  }
  out += "\"traceEvents\":[";
  bool first = true;
  for (std::string_view e : events) {
    if (!first) out += ",\n";
    first = false;
    out += e;
  }
  out += "]}";
  return out;
}

}  // namespace meshscope::traces::testing
