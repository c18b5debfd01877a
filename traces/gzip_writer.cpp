// zlib's deflate with a gzip header (windowBits 15 + 16), streamed in 64 KiB pieces.
#include "traces/gzip_writer.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace meshscope::traces {

bool is_gzip_path(const std::filesystem::path& path) {
  const std::string ext = path.extension().string();
  return ext.size() == 3 && ext[0] == '.' && (ext[1] == 'g' || ext[1] == 'G') &&
         (ext[2] == 'z' || ext[2] == 'Z');
}

GzipWriter::GzipWriter(AtomicFile& out) : out_(out) {
  if (deflateInit2(&z_, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("cannot write " + out.target().string() + ": zlib's deflate failed");
}

GzipWriter::~GzipWriter() { deflateEnd(&z_); }

void GzipWriter::write(std::string_view data) {
  // avail_in is 32 bits: a larger piece goes in parts.
  constexpr size_t kPiece = size_t{1} << 30;
  for (size_t at = 0; at < data.size(); at += kPiece)
    deflate_all(data.substr(at, std::min(kPiece, data.size() - at)), Z_NO_FLUSH);
}

void GzipWriter::finish() { deflate_all({}, Z_FINISH); }

void GzipWriter::deflate_all(std::string_view data, int flush) {
  z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z_.avail_in = static_cast<uInt>(data.size());
  for (;;) {
    z_.next_out = reinterpret_cast<Bytef*>(buffer_);
    z_.avail_out = sizeof buffer_;
    const int rc = deflate(&z_, flush);
    if (rc == Z_STREAM_ERROR)
      throw std::runtime_error("cannot write " + out_.target().string() +
                               ": zlib's deflate failed");
    out_.write(std::string_view(buffer_, sizeof buffer_ - z_.avail_out));
    // Without flushing, deflate has taken all of the input once it leaves room in the buffer; at
    // the end it says so.
    if (flush == Z_FINISH ? rc == Z_STREAM_END : z_.avail_out != 0) return;
  }
}

}  // namespace meshscope::traces
