// PNG encoding and decoding: chunks with CRCs, per-row filters, zlib for the image data.
#include "gui/view/png.h"

#include <zlib.h>

#include <array>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "traces/atomic_file.h"

namespace meshscope::gui {
namespace {

constexpr std::string_view kSignature{"\x89PNG\r\n\x1a\n", 8};

void put_u32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>((v >> shift) & 0xff));
}

uint32_t get_u32(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) v = v << 8 | static_cast<uint8_t>(s[at + i]);
  return v;
}

void put_chunk(std::string& out, const char* type, const std::string& data) {
  put_u32(out, static_cast<uint32_t>(data.size()));
  const size_t type_at = out.size();
  out.append(type, 4);
  out += data;
  const auto* p = reinterpret_cast<const Bytef*>(out.data() + type_at);
  put_u32(out, static_cast<uint32_t>(crc32(0, p, static_cast<uInt>(4 + data.size()))));
}

uint8_t paeth(int a, int b, int c) {
  const int p = a + b - c;
  const int pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  if (pa <= pb && pa <= pc) return static_cast<uint8_t>(a);
  return static_cast<uint8_t>(pb <= pc ? b : c);
}

// Filter byte f applied to one row: raw = the row, prior = the row above (zeros for the first).
uint8_t predict(int f, const uint8_t* raw, const uint8_t* prior, size_t i, size_t bpp) {
  const int a = i >= bpp ? raw[i - bpp] : 0;
  const int b = prior[i];
  const int c = i >= bpp ? prior[i - bpp] : 0;
  switch (f) {
    case 1:
      return static_cast<uint8_t>(a);
    case 2:
      return static_cast<uint8_t>(b);
    case 3:
      return static_cast<uint8_t>((a + b) / 2);
    case 4:
      return paeth(a, b, c);
    default:
      return 0;
  }
}

std::string deflate_all(const std::string& raw) {
  uLongf size = compressBound(static_cast<uLong>(raw.size()));
  std::string out(size, '\0');
  if (compress2(reinterpret_cast<Bytef*>(out.data()), &size,
                reinterpret_cast<const Bytef*>(raw.data()), static_cast<uLong>(raw.size()),
                6) != Z_OK) {
    throw std::runtime_error("png: zlib compression failed");
  }
  out.resize(size);
  return out;
}

std::string inflate_all(const std::string& z, const std::string& what, size_t expected) {
  std::string out(expected, '\0');
  uLongf size = static_cast<uLongf>(expected);
  const int rc = uncompress(reinterpret_cast<Bytef*>(out.data()), &size,
                            reinterpret_cast<const Bytef*>(z.data()), static_cast<uLong>(z.size()));
  if (rc != Z_OK || size != expected) {
    throw std::runtime_error(what + ": image data does not inflate to " + std::to_string(expected) +
                             " bytes (zlib " + std::to_string(rc) + ")");
  }
  return out;
}

}  // namespace

uint32_t Image::pixel(int x, int y) const {
  const size_t at =
      (static_cast<size_t>(y) * static_cast<size_t>(width) + static_cast<size_t>(x)) * 4;
  return static_cast<uint32_t>(rgba[at]) | static_cast<uint32_t>(rgba[at + 1]) << 8 |
         static_cast<uint32_t>(rgba[at + 2]) << 16 | static_cast<uint32_t>(rgba[at + 3]) << 24;
}

std::string encode_png(const Image& image) {
  if (image.width <= 0 || image.height <= 0 ||
      image.rgba.size() !=
          static_cast<size_t>(image.width) * static_cast<size_t>(image.height) * 4) {
    throw std::invalid_argument("png: image size does not match its pixels");
  }
  const size_t stride = static_cast<size_t>(image.width) * 4;
  std::string raw;
  raw.reserve((stride + 1) * static_cast<size_t>(image.height));
  std::vector<uint8_t> zeros(stride, 0);
  std::array<std::vector<uint8_t>, 5> candidates;
  for (auto& c : candidates) c.resize(stride);
  for (int y = 0; y < image.height; ++y) {
    const uint8_t* row = image.rgba.data() + static_cast<size_t>(y) * stride;
    const uint8_t* prior = y > 0 ? row - stride : zeros.data();
    // The usual heuristic: the filter whose output has the smallest sum of |signed bytes|.
    int best = 0;
    long best_sum = -1;
    for (int f = 0; f < 5; ++f) {
      long sum = 0;
      for (size_t i = 0; i < stride; ++i) {
        const auto v = static_cast<uint8_t>(row[i] - predict(f, row, prior, i, 4));
        candidates[f][i] = v;
        sum += v < 128 ? v : 256 - v;
      }
      if (best_sum < 0 || sum < best_sum) {
        best_sum = sum;
        best = f;
      }
    }
    raw.push_back(static_cast<char>(best));
    raw.append(reinterpret_cast<const char*>(candidates[best].data()), stride);
  }
  std::string png(kSignature);
  std::string header;
  put_u32(header, static_cast<uint32_t>(image.width));
  put_u32(header, static_cast<uint32_t>(image.height));
  header +=
      std::string("\x08\x06\x00\x00\x00", 5);  // 8 bits, RGBA, deflate, adaptive, no interlace
  put_chunk(png, "IHDR", header);
  put_chunk(png, "IDAT", deflate_all(raw));
  put_chunk(png, "IEND", "");
  return png;
}

void write_png(const std::filesystem::path& path, const Image& image) {
  traces::write_file_atomic(path, encode_png(image));
}

Image decode_png(const std::string& bytes, const std::string& what) {
  if (bytes.size() < 8 || bytes.compare(0, 8, kSignature) != 0) {
    throw std::runtime_error(what + ": not a PNG file (byte 0)");
  }
  size_t at = 8;
  Image image;
  int channels = 0;
  std::string idat;
  bool ended = false;
  while (!ended) {
    if (at + 12 > bytes.size())
      throw std::runtime_error(what + ": truncated chunk at byte " + std::to_string(at));
    const uint32_t length = get_u32(bytes, at);
    if (length > bytes.size() - at - 12) {
      throw std::runtime_error(what + ": chunk length past the end at byte " + std::to_string(at));
    }
    const std::string type = bytes.substr(at + 4, 4);
    const auto* p = reinterpret_cast<const Bytef*>(bytes.data() + at + 4);
    if (crc32(0, p, length + 4) != get_u32(bytes, at + 8 + length)) {
      throw std::runtime_error(what + ": bad CRC in " + type + " chunk at byte " +
                               std::to_string(at));
    }
    const std::string data = bytes.substr(at + 8, length);
    if (type == "IHDR") {
      if (length != 13)
        throw std::runtime_error(what + ": bad IHDR length at byte " + std::to_string(at));
      image.width = static_cast<int>(get_u32(data, 0));
      image.height = static_cast<int>(get_u32(data, 4));
      const int depth = static_cast<uint8_t>(data[8]);
      const int color = static_cast<uint8_t>(data[9]);
      channels = color == 0 ? 1 : color == 2 ? 3 : color == 6 ? 4 : 0;
      if (depth != 8 || channels == 0 || data[12] != 0 || image.width <= 0 || image.height <= 0 ||
          image.width > 1 << 15 || image.height > 1 << 15) {
        throw std::runtime_error(what + ": unsupported PNG format in IHDR at byte " +
                                 std::to_string(at));
      }
    } else if (type == "IDAT") {
      idat += data;
    } else if (type == "IEND") {
      ended = true;
    }
    at += 12 + length;
  }
  if (channels == 0) throw std::runtime_error(what + ": no IHDR chunk");
  const size_t stride = static_cast<size_t>(image.width) * static_cast<size_t>(channels);
  std::string raw = inflate_all(idat, what, (stride + 1) * static_cast<size_t>(image.height));
  std::vector<uint8_t> prev(stride, 0), cur(stride);
  image.rgba.resize(static_cast<size_t>(image.width) * static_cast<size_t>(image.height) * 4);
  for (int y = 0; y < image.height; ++y) {
    const auto* in =
        reinterpret_cast<const uint8_t*>(raw.data()) + static_cast<size_t>(y) * (stride + 1);
    const int f = in[0];
    if (f > 4)
      throw std::runtime_error(what + ": bad filter " + std::to_string(f) + " on row " +
                               std::to_string(y));
    for (size_t i = 0; i < stride; ++i) {
      cur[i] = static_cast<uint8_t>(
          in[1 + i] + predict(f, cur.data(), prev.data(), i, static_cast<size_t>(channels)));
    }
    for (int x = 0; x < image.width; ++x) {
      uint8_t* px =
          image.rgba.data() +
          (static_cast<size_t>(y) * static_cast<size_t>(image.width) + static_cast<size_t>(x)) * 4;
      const uint8_t* src = cur.data() + static_cast<size_t>(x) * static_cast<size_t>(channels);
      px[0] = src[0];
      px[1] = channels >= 3 ? src[1] : src[0];
      px[2] = channels >= 3 ? src[2] : src[0];
      px[3] = channels == 4 ? src[3] : 255;
    }
    std::swap(prev, cur);
  }
  return image;
}

Image read_png(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path.string() + ": cannot open");
  std::ostringstream ss;
  ss << in.rdbuf();
  return decode_png(ss.str(), path.string());
}

}  // namespace meshscope::gui
