// An SVG chart of scaling curves for `meshscope predict --plot`: one line per series, points
// labelled, axes with ticks, written as a standalone file.
#pragma once

#include <string>
#include <vector>

namespace meshscope::predict {

struct Series {
  std::string label;
  std::vector<double> x, y;
  // Optional, one per point: the range drawn as an error bar (predict's development-set range).
  std::vector<double> y_low, y_high;
};

struct Chart {
  std::string title;
  std::string x_label;
  std::string y_label;
  bool log_x = false;
  // A categorical axis when not empty: each x is an index into it, and the ticks are its names.
  std::vector<std::string> x_categories;
  std::vector<Series> series;
};

std::string render_svg(const Chart& chart);

}  // namespace meshscope::predict
