// File, memory and gzip byte sources; the gzip one enforces the inflated-size and ratio caps.
#include "traces/import/byte_source.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <vector>

#include "traces/input_file.h"

namespace meshscope::traces::importer {
namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

class FileSource : public ByteSource {
 public:
  explicit FileSource(const std::filesystem::path& file) : name_(file.string()) {
    std::error_code ec;
    if (std::filesystem::is_directory(file, ec)) {
      throw ImportError(file, "", "is a directory, not a trace file");
    }
    std::string why;
    std::optional<InputFile> in = InputFile::open(name_, why);
    if (!in) throw ImportError(file, "", "cannot open: " + why);
    file_.reset(in->release_to_stdio());
    if (!file_) throw ImportError(file, "", std::string("cannot open: ") + std::strerror(errno));
  }
  size_t read(char* dst, size_t max_bytes) override {
    const size_t n = std::fread(dst, 1, max_bytes, file_.get());
    if (n == 0 && std::ferror(file_.get())) {
      throw ImportError(name_, "", std::string("read failed: ") + std::strerror(errno));
    }
    return n;
  }

 private:
  std::string name_;
  std::unique_ptr<std::FILE, FileCloser> file_;
};

class MemorySource : public ByteSource {
 public:
  explicit MemorySource(std::string_view bytes) : bytes_(bytes) {}
  size_t read(char* dst, size_t max_bytes) override {
    const size_t n = std::min(max_bytes, bytes_.size() - pos_);
    std::memcpy(dst, bytes_.data() + pos_, n);
    pos_ += n;
    return n;
  }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
};

constexpr size_t kInflateInChunk = size_t{1} << 18;
constexpr int64_t kRatioGraceBytes = int64_t{64} << 20;

class GzipSource : public ByteSource {
 public:
  GzipSource(std::unique_ptr<ByteSource> compressed, std::string file, const ImportOptions& opts)
      : in_(std::move(compressed)), file_(std::move(file)), opts_(opts), buf_(kInflateInChunk) {
    if (inflateInit2(&z_, 15 + 16) != Z_OK) throw ImportError(file_, 0, "zlib init failed");
  }
  ~GzipSource() override { inflateEnd(&z_); }
  GzipSource(const GzipSource&) = delete;
  GzipSource& operator=(const GzipSource&) = delete;

  size_t read(char* dst, size_t max_bytes) override {
    dst_ = dst;
    z_.next_out = reinterpret_cast<Bytef*>(dst);
    z_.avail_out = static_cast<uInt>(std::min<size_t>(max_bytes, UINT32_MAX));
    while (z_.avail_out > 0 && !done_) step();
    const size_t produced = static_cast<size_t>(reinterpret_cast<char*>(z_.next_out) - dst);
    out_total_ += static_cast<int64_t>(produced);
    dst_ = nullptr;
    check_caps();
    return produced;
  }

 private:
  void fill_input() {
    if (z_.avail_in > 0 || in_eof_) return;
    const size_t n = in_->read(buf_.data(), buf_.size());
    in_total_ += static_cast<int64_t>(n);
    if (n == 0) in_eof_ = true;
    z_.next_in = reinterpret_cast<Bytef*>(buf_.data());
    z_.avail_in = static_cast<uInt>(n);
  }

  void step() {
    fill_input();
    if (z_.avail_in == 0 && in_eof_) {
      if (member_started_)
        fail("gzip data truncated: the file ends at byte " + std::to_string(in_total_) +
             " inside a compressed member");
      done_ = true;
      return;
    }
    if (!member_started_) {
      // Between members: another gzip member continues the stream; trailing zeros are padding.
      if (static_cast<unsigned char>(*z_.next_in) == 0) {
        ++z_.next_in;
        --z_.avail_in;
        return;
      }
      if (members_ > 0 && static_cast<unsigned char>(*z_.next_in) != 0x1f) {
        fail("trailing garbage after gzip data");
      }
      member_started_ = true;
    }
    const int rc = inflate(&z_, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) {
      member_started_ = false;
      ++members_;
      inflateReset(&z_);
    } else if (rc == Z_BUF_ERROR) {
      if (z_.avail_in == 0 && in_eof_)
        fail("gzip data truncated: the file ends at byte " + std::to_string(in_total_) +
             " inside a compressed member");
    } else if (rc != Z_OK) {
      fail(std::string("corrupt gzip data: ") + (z_.msg ? z_.msg : "inflate error"));
    }
  }

  void check_caps() {
    if (out_total_ > opts_.max_inflated_bytes) {
      fail("inflated data exceeds " + std::to_string(opts_.max_inflated_bytes) +
           " bytes (ImportOptions::max_inflated_bytes)");
    }
    if (out_total_ > kRatioGraceBytes &&
        static_cast<double>(out_total_) >
            opts_.max_inflate_ratio * static_cast<double>(std::max<int64_t>(in_total_, 1))) {
      fail("inflated data exceeds " +
           std::to_string(static_cast<int64_t>(opts_.max_inflate_ratio)) +
           "x the compressed size: a gzip bomb? (ImportOptions::max_inflate_ratio)");
    }
  }

  // The offset is where inflating stopped: what earlier reads delivered plus this read's part.
  [[noreturn]] void fail(const std::string& reason) {
    const int64_t pending = dst_ ? reinterpret_cast<char*>(z_.next_out) - dst_ : 0;
    throw ImportError(file_, out_total_ + pending, reason);
  }

  std::unique_ptr<ByteSource> in_;
  std::string file_;
  ImportOptions opts_;
  std::vector<char> buf_;
  char* dst_ = nullptr;  // the buffer of the read in progress
  z_stream z_{};
  int64_t in_total_ = 0;
  int64_t out_total_ = 0;
  int members_ = 0;
  bool member_started_ = false;
  bool in_eof_ = false;
  bool done_ = false;
};

// A file's bytes as they are read, told to options.on_progress about every
// options.progress_interval_s (the clock is looked at once a read, a read being a window of
// kilobytes).
class ProgressSource : public ByteSource {
 public:
  // `path` is read and sized; `name` is what the reports call it.
  ProgressSource(std::unique_ptr<ByteSource> inner, const std::filesystem::path& path,
                 std::string name, const ImportOptions& options)
      : inner_(std::move(inner)),
        file_(std::move(name)),
        on_progress_(options.on_progress),
        interval_s_(options.progress_interval_s) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    size_ = ec ? 0 : static_cast<int64_t>(size);
  }

  size_t read(char* dst, size_t max_bytes) override {
    const size_t n = inner_->read(dst, max_bytes);
    read_ += static_cast<int64_t>(n);
    const auto now = std::chrono::steady_clock::now();
    if (std::chrono::duration<double>(now - last_).count() >= interval_s_) {
      last_ = now;
      on_progress_(file_, read_, size_, std::chrono::duration<double>(now - start_).count());
    }
    return n;
  }

 private:
  std::unique_ptr<ByteSource> inner_;
  std::string file_;
  std::function<void(const std::string&, int64_t, int64_t, double)> on_progress_;
  double interval_s_;
  int64_t size_ = 0, read_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now(), last_ = start_;
};

}  // namespace

std::unique_ptr<ByteSource> open_file_source(const std::filesystem::path& file) {
  return std::make_unique<FileSource>(file);
}

std::unique_ptr<ByteSource> open_memory_source(std::string_view bytes) {
  return std::make_unique<MemorySource>(bytes);
}

std::unique_ptr<ByteSource> open_gzip_source(std::unique_ptr<ByteSource> compressed,
                                             const std::string& file,
                                             const ImportOptions& options) {
  return std::make_unique<GzipSource>(std::move(compressed), file, options);
}

std::string_view PeekableSource::peek(size_t n) {
  while (head_.size() < n) {
    char tmp[4096];
    const size_t got = inner_->read(tmp, std::min(sizeof tmp, n - head_.size()));
    if (got == 0) break;
    head_.append(tmp, got);
  }
  return std::string_view(head_).substr(0, std::min(n, head_.size()));
}

size_t PeekableSource::read(char* dst, size_t max_bytes) {
  if (head_pos_ < head_.size()) {
    const size_t n = std::min(max_bytes, head_.size() - head_pos_);
    std::memcpy(dst, head_.data() + head_pos_, n);
    head_pos_ += n;
    return n;
  }
  return inner_->read(dst, max_bytes);
}

OpenedTrace open_trace_source(const std::filesystem::path& file, const std::string_view* memory,
                              const std::string& display_name, const ImportOptions& options) {
  std::unique_ptr<ByteSource> bytes = memory ? open_memory_source(*memory) : open_file_source(file);
  if (!memory && options.on_progress)
    bytes = std::make_unique<ProgressSource>(std::move(bytes), file, display_name, options);
  auto raw = std::make_unique<PeekableSource>(std::move(bytes));
  OpenedTrace opened;
  if (has_gzip_magic(raw->peek(2))) {
    opened.gzip = true;
    opened.source =
        std::make_unique<PeekableSource>(open_gzip_source(std::move(raw), display_name, options));
  } else {
    opened.source = std::move(raw);
  }
  return opened;
}

}  // namespace meshscope::traces::importer
