// gzip output into an AtomicFile: a Chrome trace named *.json.gz is written compressed, as
// Perfetto, chrome://tracing and meshscope's own importers read it.
#pragma once

#include <zlib.h>

#include <string_view>

#include "traces/atomic_file.h"

namespace meshscope::traces {

// Whether a path names a gzip file (ends in ".gz", in any case: ".GZ" too).
bool is_gzip_path(const std::filesystem::path& path);

class GzipWriter {
 public:
  explicit GzipWriter(AtomicFile& out);  // zlib's default level
  ~GzipWriter();
  GzipWriter(const GzipWriter&) = delete;
  GzipWriter& operator=(const GzipWriter&) = delete;

  void write(std::string_view data);
  // Ends the gzip stream (its trailer); the AtomicFile is then the caller's to commit.
  void finish();

 private:
  void deflate_all(std::string_view data, int flush);

  AtomicFile& out_;
  z_stream z_{};
  char buffer_[1 << 16];
};

}  // namespace meshscope::traces
