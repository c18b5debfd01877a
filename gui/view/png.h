// A small PNG codec over zlib: 8-bit RGBA images for --screenshot, and the reader the pixel tests
// use to check them. Not a general decoder: 8-bit greyscale, RGB or RGBA, non-interlaced.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace meshscope::gui {

struct Image {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> rgba;  // row-major, top row first, 4 bytes per pixel

  // Packed like activity.h colours (red in the low byte), so pixels compare to them directly.
  uint32_t pixel(int x, int y) const;
};

// The PNG file bytes of an image (filter per row chosen by the minimum-sum heuristic).
std::string encode_png(const Image& image);
// Writes the PNG whole or not at all (temp file + rename); throws naming the path on failure.
void write_png(const std::filesystem::path& path, const Image& image);

// Parses PNG bytes; throws std::runtime_error naming `what` and the byte offset of the defect.
Image decode_png(const std::string& bytes, const std::string& what = "png");
Image read_png(const std::filesystem::path& path);

}  // namespace meshscope::gui
