#include "gui/view/png.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>

#include "gui/view/activity.h"

namespace meshscope::gui {
namespace {

Image gradient(int w, int h) {
  Image img{w, h, std::vector<uint8_t>(static_cast<size_t>(w * h * 4))};
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      uint8_t* p = &img.rgba[static_cast<size_t>((y * w + x) * 4)];
      p[0] = static_cast<uint8_t>(x * 7);
      p[1] = static_cast<uint8_t>(y * 13);
      p[2] = static_cast<uint8_t>((x ^ y) * 3);
      p[3] = static_cast<uint8_t>(255 - x);
    }
  }
  return img;
}

TEST(Png, RoundTripsEveryPixel) {
  const Image img = gradient(37, 23);
  const std::string bytes = encode_png(img);
  EXPECT_EQ(bytes.substr(1, 3), "PNG");
  const Image back = decode_png(bytes);
  EXPECT_EQ(back.width, 37);
  EXPECT_EQ(back.height, 23);
  EXPECT_EQ(back.rgba, img.rgba);
}

TEST(Png, PixelPacksLikeTheActivityColours) {
  Image img{1, 1, {211, 47, 47, 255}};
  EXPECT_EQ(img.pixel(0, 0), kBubbleColor);
}

TEST(Png, WritesWholeFilesAndReadsThemBack) {
  const auto path = std::filesystem::temp_directory_path() / "meshscope_png_test.png";
  write_png(path, gradient(8, 8));
  EXPECT_EQ(read_png(path).rgba, gradient(8, 8).rgba);
  std::filesystem::remove(path);
  EXPECT_THROW(write_png("/nonexistent-dir/x.png", gradient(2, 2)), std::runtime_error);
}

TEST(Png, DamagedFilesAreRejectedWithTheByteOffset) {
  std::string bytes = encode_png(gradient(4, 4));
  EXPECT_THROW(decode_png("GIF89a"), std::runtime_error);
  std::string bad = bytes;
  bad[20] ^= 1;  // inside IHDR: the CRC no longer matches
  try {
    decode_png(bad, "shot.png");
    FAIL() << "accepted a bad CRC";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("shot.png: bad CRC in IHDR chunk at byte 8"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(decode_png(bytes.substr(0, bytes.size() / 2)), std::runtime_error);
}

}  // namespace
}  // namespace meshscope::gui
