// Hand-written SVG: no dependency, a few hundred bytes per series.
#include "sim/predict/plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace meshscope::predict {
namespace {

constexpr const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                   "#9467bd", "#8c564b", "#e377c2", "#17becf"};

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '<')
      o += "&lt;";
    else if (c == '>')
      o += "&gt;";
    else if (c == '&')
      o += "&amp;";
    else
      o += c;
  }
  return o;
}

std::string num(double v) {
  char buf[32];
  const double a = std::fabs(v);
  if (a != 0 && (a >= 1e6 || a < 1e-2))
    std::snprintf(buf, sizeof buf, "%.2g", v);
  else
    std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

}  // namespace

std::string render_svg(const Chart& c) {
  const double W = 720, H = 440, L = 80, R = 200, T = 40, B = 60;
  double x0 = std::numeric_limits<double>::infinity(), x1 = -x0, y1 = 0;
  for (const Series& s : c.series)
    for (size_t i = 0; i < s.x.size(); ++i) {
      const double x = c.log_x ? std::log2(std::max(s.x[i], 1e-12)) : s.x[i];
      x0 = std::min(x0, x);
      x1 = std::max(x1, x);
      y1 = std::max(y1, s.y[i]);
      if (i < s.y_high.size()) y1 = std::max(y1, s.y_high[i]);
    }
  if (!c.x_categories.empty()) {  // each category its own slot, none on the axis
    x0 = -0.5;
    x1 = static_cast<double>(c.x_categories.size()) - 0.5;
  }
  if (!std::isfinite(x0)) x0 = 0, x1 = 1;
  if (x1 == x0) x1 = x0 + 1;
  if (y1 <= 0) y1 = 1;
  y1 *= 1.1;
  auto px = [&](double x) {
    return L + ((c.log_x ? std::log2(std::max(x, 1e-12)) : x) - x0) / (x1 - x0) * (W - L - R);
  };
  auto py = [&](double y) { return H - B - y / y1 * (H - T - B); };
  std::string o;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%%\" "
                "height=\"100%%\" fill=\"white\"/>\n",
                W, H);
  o += buf;
  o += "<text x=\"" + num(W / 2) + "\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">" +
       esc(c.title) + "</text>\n";
  // Axes and ticks.
  std::snprintf(buf, sizeof buf,
                "<path d=\"M%.1f %.1f V%.1f H%.1f\" stroke=\"black\" fill=\"none\"/>\n", L, T,
                H - B, W - R);
  o += buf;
  for (int i = 0; i <= 5; ++i) {
    const double y = y1 * i / 5;
    std::snprintf(buf, sizeof buf,
                  "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                  "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                  L, W - R, py(y), py(y), L - 6, py(y) + 4, num(y).c_str());
    o += buf;
  }
  std::vector<double> xs;
  for (const Series& s : c.series) xs.insert(xs.end(), s.x.begin(), s.x.end());
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  const bool categorical = !c.x_categories.empty();
  for (double x : xs) {
    const size_t at = static_cast<size_t>(x);
    const std::string tick = !categorical                 ? num(x)
                             : at < c.x_categories.size() ? esc(c.x_categories[at])
                                                          : std::string();
    o += "<text x=\"" + num(px(x)) + "\" y=\"" + num(H - B + 18) + "\" text-anchor=\"middle\">" +
         tick + "</text>\n";
  }
  o += "<text x=\"" + num(L + (W - L - R) / 2) + "\" y=\"" + num(H - 16) +
       "\" text-anchor=\"middle\">" + esc(c.x_label) + "</text>\n";
  o += "<text transform=\"translate(18 " + num(T + (H - T - B) / 2) +
       ") rotate(-90)\" text-anchor=\"middle\">" + esc(c.y_label) + "</text>\n";
  for (size_t k = 0; k < c.series.size(); ++k) {
    const Series& s = c.series[k];
    const char* col = kColors[k % 8];
    std::vector<size_t> order(s.x.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return s.x[a] < s.x[b]; });
    // Categories are not a scale: points alone, no line between them.
    if (!categorical) {
      std::string d;
      for (size_t i : order)
        d += (d.empty() ? "M" : " L") + num(px(s.x[i])) + " " + num(py(s.y[i]));
      o += "<path d=\"" + d + "\" stroke=\"" + col + "\" stroke-width=\"2\" fill=\"none\"/>\n";
    }
    // The range around each point, as a bar with caps.
    for (size_t i : order) {
      if (i >= s.y_low.size() || i >= s.y_high.size() || s.y_low[i] == s.y_high[i]) continue;
      const double x = px(s.x[i]), lo = py(s.y_low[i]), hi = py(s.y_high[i]);
      std::snprintf(buf, sizeof buf,
                    "<path class=\"range\" d=\"M%.1f %.1f V%.1f M%.1f %.1f H%.1f M%.1f %.1f "
                    "H%.1f\" stroke=\"%s\" "
                    "stroke-width=\"1\" fill=\"none\"><title>%s: %s .. %s</title></path>\n",
                    x, lo, hi, x - 4, lo, x + 4, x - 4, hi, x + 4, col, esc(s.label).c_str(),
                    num(s.y_low[i]).c_str(), num(s.y_high[i]).c_str());
      o += buf;
    }
    for (size_t i : order) {
      std::snprintf(
          buf, sizeof buf,
          "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"><title>%s: %s</title></circle>\n",
          px(s.x[i]), py(s.y[i]), col, esc(s.label).c_str(), num(s.y[i]).c_str());
      o += buf;
    }
    std::snprintf(buf, sizeof buf,
                  "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/>"
                  "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n",
                  W - R + 16, T + 18.0 * k, col, W - R + 34, T + 18.0 * k + 10,
                  esc(s.label).c_str());
    o += buf;
  }
  o += "</svg>\n";
  return o;
}

}  // namespace meshscope::predict
