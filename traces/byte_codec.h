// A minimal little-endian byte codec for shipping structures between processes of one run (same
// build, same architecture): fixed-size values as raw bytes, strings and vectors length-prefixed.
// Reading past the end or an absurd length throws std::runtime_error naming the byte offset.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace meshscope::traces {

class ByteWriter {
 public:
  template <typename T>
  void put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    out_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void put_string(std::string_view s) {
    put<uint64_t>(s.size());
    out_.append(s.data(), s.size());
  }
  template <typename T>
  void put_vector(const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    put<uint64_t>(v.size());
    if (!v.empty()) out_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class ByteReader {
 public:
  ByteReader(std::string_view in, std::string what) : in_(in), what_(std::move(what)) {}

  template <typename T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    need(sizeof(T));
    T v;
    std::memcpy(&v, in_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }
  std::string get_string() {
    const uint64_t n = get<uint64_t>();
    need(n);
    std::string s(in_.substr(pos_, n));
    pos_ += n;
    return s;
  }
  template <typename T>
  std::vector<T> get_vector() {
    const uint64_t n = get<uint64_t>();
    if (n > (in_.size() - pos_) / sizeof(T)) fail(n * sizeof(T));
    std::vector<T> v(n);
    if (n > 0) std::memcpy(v.data(), in_.data() + pos_, n * sizeof(T));
    pos_ += n * sizeof(T);
    return v;
  }
  // A count of items that each take at least `min_bytes`: checked against what is left.
  uint64_t get_count(size_t min_bytes) {
    const uint64_t n = get<uint64_t>();
    if (min_bytes > 0 && n > (in_.size() - pos_) / min_bytes) fail(n * min_bytes);
    return n;
  }
  bool done() const { return pos_ == in_.size(); }
  size_t offset() const { return pos_; }

 private:
  void need(uint64_t n) {
    if (n > in_.size() - pos_) fail(n);
  }
  [[noreturn]] void fail(uint64_t n) const {
    throw std::runtime_error(what_ + ": truncated at byte " + std::to_string(pos_) + " (" +
                             std::to_string(n) + " more bytes needed, " +
                             std::to_string(in_.size() - pos_) + " left)");
  }

  std::string_view in_;
  std::string what_;
  size_t pos_ = 0;
};

}  // namespace meshscope::traces
