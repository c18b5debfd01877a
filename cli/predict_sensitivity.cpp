#include "cli/predict_sensitivity.h"

#include <cstdio>
#include <string>
#include <vector>

namespace meshscope::cli {
namespace {

std::string printf_string(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

// The change of the step time, in percent with a sign; '*' when the figure could not move the
// whole way (a fraction capped at 1).
std::string change(double step_s, double base_s, bool short_of_it) {
  return printf_string("%+.1f%%", 100 * (step_s / base_s - 1)) + (short_of_it ? "*" : " ");
}

// At most `width` characters of `text` (UTF-8 kept whole), "..." where it was cut.
std::string cut(const std::string& text, size_t width) {
  if (text.size() <= width) return text;
  size_t end = width - 3;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end) + "...";
}

// The figure's raised value is short of value x (1 + fraction): a fraction of a peak held at 1.
bool capped(const predict::FigureSensitivity& f, double fraction) {
  return f.high_value == 1.0 && f.value * (1 + fraction) > 1.0;
}

}  // namespace

std::string format_sensitivity(const predict::Sensitivity& s) {
  const double pct = 100 * s.fraction;
  std::string out = "\nthe step (" + printf_string("%.4g s", s.step_time_s) +
                    ") with one figure of " + s.hardware + "'s catalog entry moved by " +
                    printf_string("%.0f", pct) + "% at a time (fractions of a peak capped at 1):\n";
  char line[512];
  std::snprintf(line, sizeof line, "  %-33s %10s %9s  %9s  %-10s %s\n", "figure", "value",
                ("-" + printf_string("%.0f", pct) + "%").c_str(),
                ("+" + printf_string("%.0f", pct) + "%").c_str(), "basis", "source");
  out += line;
  std::vector<std::string> quiet;
  for (const predict::FigureSensitivity& f : s.figures) {
    if (f.largest_change(s.step_time_s) < kSensitivityNoticeable) {
      quiet.push_back(f.figure);
      continue;
    }
    const std::string basis = f.source.empty() ? "none named"
                              : f.assumption   ? "assumption"
                                               : "source";
    std::snprintf(line, sizeof line, "  %-33s %10.4g %10s %10s %-10s %s\n", f.figure.c_str(),
                  f.value, change(f.step_time_s_low, s.step_time_s, false).c_str(),
                  change(f.step_time_s_high, s.step_time_s, capped(f, s.fraction)).c_str(),
                  basis.c_str(), cut(f.source, 70).c_str());
    out += line;
  }
  if (!quiet.empty()) {
    out += "  moving the step by less than " + printf_string("%.2g", 100 * kSensitivityNoticeable) +
           "%:";
    for (size_t i = 0; i < quiet.size(); ++i) out += (i ? ", " : " ") + quiet[i];
    out += "\n";
  }
  for (const predict::FigureSensitivity& f : s.figures)
    if (capped(f, s.fraction) && f.largest_change(s.step_time_s) >= kSensitivityNoticeable) {
      out += "  * raised only to 1, the most a fraction of a peak can be\n";
      break;
    }
  if (!s.fits)
    out +=
        "  the configuration does not fit in the device's memory (--breakdown says what holds "
        "it): these are the step times it would have if it did\n";
  out +=
      "  (each row is the step simulated again with that figure alone changed; the figures' "
      "sources: the catalog file's \"sources\", docs/ACCURACY.md)\n";
  return out;
}

}  // namespace meshscope::cli
