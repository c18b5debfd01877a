#include "sim/predict/plot.h"

#include <gtest/gtest.h>

namespace meshscope::predict {
namespace {

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

TEST(PredictPlot, OneLinePerSeriesWithEveryPoint) {
  Chart c;
  c.title = "scaling <a & b>";
  c.x_label = "gpus";
  c.y_label = "tokens/s";
  c.log_x = true;
  c.series = {{"a100", {8, 16, 32}, {1, 2, 3.5}, {}, {}},
              {"h100", {8, 16, 32}, {3, 6, 11}, {}, {}}};
  const std::string svg = render_svg(c);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_EQ(count(svg, "<circle"), 6u);
  EXPECT_EQ(count(svg, "stroke-width=\"2\""), 2u);
  EXPECT_NE(svg.find("scaling &lt;a &amp; b&gt;"), std::string::npos);  // escaped, valid XML
  EXPECT_EQ(svg.find("<a &"), std::string::npos);
  // Log x: 8, 16, 32 are evenly spaced.
  EXPECT_NE(svg.find("M80 "), std::string::npos);
}

TEST(PredictPlot, RangesAreDrawnAsBarsAroundThePoints) {
  Chart c;
  Series s{"a100", {8, 16}, {1, 2}, {}, {}};
  s.y_low = {0.8, 1.6};
  s.y_high = {1.2, 2.4};
  c.series = {s};
  const std::string svg = render_svg(c);
  EXPECT_EQ(count(svg, "class=\"range\""), 2u);
  EXPECT_NE(svg.find("a100: 1.6 .. 2.4"), std::string::npos) << svg;
  c.series[0].y_low.clear();  // no range: no bars
  EXPECT_EQ(count(render_svg(c), "class=\"range\""), 0u);
}

TEST(PredictPlot, EmptyChartIsStillAnImage) {
  const std::string svg = render_svg(Chart{});
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
}

}  // namespace
}  // namespace meshscope::predict
