// The number texts of traces/number_text.h: seconds as messages write them.
#include "traces/number_text.h"

#include <gtest/gtest.h>

namespace meshscope::traces {
namespace {

TEST(FormatSeconds, PrintfGFigureThenTheUnit) {
  EXPECT_EQ(format_seconds(5), "5 s");
  EXPECT_EQ(format_seconds(0.25), "0.25 s");
  EXPECT_EQ(format_seconds(60), "60 s");
  EXPECT_EQ(format_seconds(1e6), "1e+06 s");
}

}  // namespace
}  // namespace meshscope::traces
