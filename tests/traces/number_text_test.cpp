// The number texts of traces/number_text.h: seconds as messages write them, whole integers as
// a trace's metadata holds them.
#include "traces/number_text.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace meshscope::traces {
namespace {

TEST(FormatSeconds, PrintfGFigureThenTheUnit) {
  EXPECT_EQ(format_seconds(5), "5 s");
  EXPECT_EQ(format_seconds(0.25), "0.25 s");
  EXPECT_EQ(format_seconds(60), "60 s");
  EXPECT_EQ(format_seconds(1e6), "1e+06 s");
}

TEST(ParseWholeInt, TheWholeTextAsFromCharsReadsIt) {
  EXPECT_EQ(parse_whole_int("0"), 0);
  EXPECT_EQ(parse_whole_int("42"), 42);
  EXPECT_EQ(parse_whole_int("-7"), -7);  // a sign is the caller's to refuse
  EXPECT_EQ(parse_whole_int("007"), 7);
  EXPECT_EQ(parse_whole_int("9223372036854775807"), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(parse_whole_int("-9223372036854775808"), std::numeric_limits<int64_t>::min());
  for (const char* bad : {"", "-", "+1", " 1", "1 ", "1x", "0x10", "1.5", "9223372036854775808"})
    EXPECT_EQ(parse_whole_int(bad), std::nullopt) << bad;
}

}  // namespace
}  // namespace meshscope::traces
