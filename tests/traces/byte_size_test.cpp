#include "traces/byte_size.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

namespace meshscope::traces {
namespace {

TEST(FormatBytes, WholeBytesBelowOneKibibyteThenOneDecimalInTheLargestUnit) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(1023), "1023 B");
  EXPECT_EQ(format_bytes(1024), "1.0 KiB");
  EXPECT_EQ(format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(format_bytes(double(int64_t{3} << 20)), "3.0 MiB");
  EXPECT_EQ(format_bytes(79.2 * (1 << 30)), "79.2 GiB");
  EXPECT_EQ(format_bytes(9.5 * std::pow(1024.0, 4)), "9.5 TiB");
}

TEST(FormatBytes, NegativeCountsKeepTheirSignAndHugeOnesStopAtExbibytes) {
  EXPECT_EQ(format_bytes(-512), "-512 B");
  EXPECT_EQ(format_bytes(-1536), "-1.5 KiB");
  EXPECT_EQ(format_bytes(std::pow(1024.0, 6)), "1.0 EiB");
  EXPECT_EQ(format_bytes(2048 * std::pow(1024.0, 6)), "2048.0 EiB");
}

}  // namespace
}  // namespace meshscope::traces
