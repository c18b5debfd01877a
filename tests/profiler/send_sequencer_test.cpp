// SendSequencer: sends released in the receiver's order, step after step, with misuse refused.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "profiler/runtime/send_sequencer.h"

namespace meshscope::runtime {
namespace {

using Released = std::vector<std::string>;

TEST(SendSequencer, WithoutAnOrderMessagesGoOutAsTheyCome) {
  SendSequencer<std::string> s;
  EXPECT_EQ(s.push(9, "a"), Released{"a"});
  EXPECT_EQ(s.push(3, "b"), Released{"b"});
  EXPECT_EQ(s.held(), 0u);
}

TEST(SendSequencer, HoldsAMessageUntilTheOnesTheReceiverTakesFirstWent) {
  SendSequencer<std::string> s;
  s.expect({20, 10, 30});
  EXPECT_EQ(s.push(10, "ten"), Released{});  // the receiver takes 20 first
  EXPECT_EQ(s.held(), 1u);
  EXPECT_EQ(s.push(30, "thirty"), Released{});
  EXPECT_EQ(s.push(20, "twenty"), (Released{"twenty", "ten", "thirty"}));
  EXPECT_EQ(s.held(), 0u);
}

TEST(SendSequencer, TheOrderRepeatsEveryStep) {
  SendSequencer<std::string> s;
  s.expect({2, 1});
  for (int step = 0; step < 3; ++step) {
    const std::string n = std::to_string(step);
    EXPECT_EQ(s.push(1, "one" + n), Released{}) << step;
    EXPECT_EQ(s.push(2, "two" + n), (Released{"two" + n, "one" + n})) << step;
  }
}

TEST(SendSequencer, InOrderSendsGoStraightThrough) {
  SendSequencer<std::string> s;
  s.expect({4, 5, 6});
  EXPECT_EQ(s.push(4, "a"), Released{"a"});
  EXPECT_EQ(s.push(5, "b"), Released{"b"});
  EXPECT_EQ(s.push(6, "c"), Released{"c"});
}

TEST(SendSequencer, RefusesATagTheReceiverNeverTakesAndDuplicates) {
  SendSequencer<std::string> s;
  s.expect({1, 2, 3});
  EXPECT_THROW(s.push(7, "x"), std::invalid_argument);
  EXPECT_EQ(s.push(2, "b"), Released{});
  EXPECT_THROW(s.push(2, "b again"), std::invalid_argument);  // held already
  EXPECT_EQ(s.push(1, "a"), (Released{"a", "b"}));
  EXPECT_THROW(s.push(1, "a again"), std::invalid_argument);  // went already this step
  EXPECT_THROW(s.expect({1, 1}), std::invalid_argument);
}

}  // namespace
}  // namespace meshscope::runtime
