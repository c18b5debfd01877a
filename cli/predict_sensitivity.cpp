#include "cli/predict_sensitivity.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace meshscope::cli {

namespace {

// The change of the step time, in percent with a sign; '*' when the figure could not move the
// whole way (a fraction capped at 1).
std::string change(double step_s, double base_s, bool short_of_it) {
  return format_number("%+.1f%%", 100 * (step_s / base_s - 1)) + (short_of_it ? "*" : " ");
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

// One table: a row per figure that moves the step, the others by name. Sets `unnamed` when a row
// has no source line.
std::string table(const std::vector<predict::FigureSensitivity>& figures, double fraction,
                  double step_time_s, bool& unnamed) {
  const double pct = 100 * fraction;
  // The figure column as wide as its longest name (33 at least, the catalog's).
  int name_width = 33;
  for (const predict::FigureSensitivity& f : figures)
    name_width = std::max(name_width, static_cast<int>(f.figure.size()));
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "  %-*s %10s %9s  %9s  %-10s %s\n", name_width, "figure",
                "value", ("-" + format_number("%.0f", pct) + "%").c_str(),
                ("+" + format_number("%.0f", pct) + "%").c_str(), "basis", "source");
  out += line;
  std::vector<std::string> quiet, overridden;
  bool any_capped = false;
  for (const predict::FigureSensitivity& f : figures) {
    if (!f.overridden_by.empty()) {
      overridden.push_back(f.figure + " (by " + f.overridden_by + ")");
      continue;
    }
    if (f.largest_change(step_time_s) < kSensitivityNoticeable) {
      quiet.push_back(f.figure);
      continue;
    }
    unnamed = unnamed || f.source.empty();
    const std::string basis = f.source.empty() ? "none named"
                              : f.assumption   ? "assumption"
                                               : "source";
    any_capped = any_capped || capped(f, fraction);
    std::snprintf(line, sizeof line, "  %-*s %10.4g %10s %10s %-10s %s\n", name_width,
                  f.figure.c_str(), f.value,
                  change(f.step_time_s_at_low_value, step_time_s, false).c_str(),
                  change(f.step_time_s_at_high_value, step_time_s, capped(f, fraction)).c_str(),
                  basis.c_str(), cut(f.source, 70).c_str());
    out += line;
  }
  if (!quiet.empty()) {
    out += "  moving the step by less than " + format_number("%.2g", 100 * kSensitivityNoticeable) +
           "%:";
    for (size_t i = 0; i < quiet.size(); ++i) out += (i ? ", " : " ") + quiet[i];
    out += "\n";
  }
  if (!overridden.empty()) {
    out += "  set by the config in the file's place, so moving the file's moves nothing:";
    for (size_t i = 0; i < overridden.size(); ++i) out += (i ? ", " : " ") + overridden[i];
    out += "\n";
  }
  if (any_capped) out += "  * raised only to 1, the most a fraction of a peak can be\n";
  return out;
}

}  // namespace

std::string format_sensitivity(const predict::Sensitivity& s) {
  const std::string pct = format_number("%.0f", 100 * s.fraction);
  std::string out = "\nthe step (" + format_number("%.4g s", s.step_time_s) +
                    ") with one figure moved by " + pct +
                    "% at a time, every other held; first those of " + s.hardware +
                    "'s catalog entry (fractions of a peak capped at 1):\n";
  bool unnamed = false;
  out += table(s.figures, s.fraction, s.step_time_s, unnamed);
  if (!s.profile_figures.empty()) {
    out += "\nthen those of the " + s.framework + " framework profile:\n";
    out += table(s.profile_figures, s.fraction, s.step_time_s, unnamed);
  }
  out += "\n";
  if (!s.fits)
    out +=
        "the configuration does not fit in the device's memory (--breakdown says what holds it): "
        "these are the step times it would have if it did\n";
  out += "(each row is the step simulated again with that figure alone changed";
  if (unnamed)
    out += "; \"none named\": no line of the file's \"sources\" names it, a default of the code";
  out += "; docs/ACCURACY.md)\n";
  return out;
}

}  // namespace meshscope::cli
