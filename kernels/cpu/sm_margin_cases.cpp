// The files of meshscope-kernel-check --sm-margin (sm_margin_cases.h).
#include "kernels/cpu/sm_margin_cases.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "kernels/cpu/csv_lines.h"

namespace meshscope::kernels {

std::vector<SmMarginCase> read_sm_margin_cases(const std::string& path) {
  std::vector<SmMarginCase> cases;
  for (const CsvLine& l : read_csv_lines(path, {.header = "name,m,n,k,num_sm,num_splits",
                                               .max_mib = 1,
                                               .what = "a file of SM margin cases",
                                               .header_wanted = {},
                                               .quote = {}})) {
    const std::string where = path + ":" + std::to_string(l.number) + ": ";
    SmMarginCase c;
    const size_t comma = l.text.find(',');
    c.name = l.text.substr(0, comma);
    std::string rest = comma == std::string::npos ? "" : l.text.substr(comma + 1);
    std::replace(rest.begin(), rest.end(), ',', ' ');
    std::istringstream s(rest);
    s >> c.m >> c.n >> c.k >> c.num_sm >> c.num_splits;
    if (c.name.empty() || s.fail() || c.m < 1 || c.n < 1 || c.k < 1 || c.num_sm < 1 ||
        c.num_splits < 1)
      throw std::runtime_error(where + "want a name and m,n,k,num_sm,num_splits of 1 or more");
    if (c.n % c.num_splits != 0)
      throw std::runtime_error(where + "num_splits " + std::to_string(c.num_splits) +
                               " does not divide n " + std::to_string(c.n));
    cases.push_back(c);
  }
  if (cases.empty()) throw std::runtime_error(path + ": no cases");
  return cases;
}

std::string format_sm_margin(const std::vector<SmMarginTimes>& times) {
  std::string out =
      "name,m,n,k,num_sm,num_splits,sms,whole_s,whole_target_s,split_s,split_target_s,held_s,"
      "held_target_s\n";
  char line[256];  // the figures; the name, of any length, goes before them
  for (const SmMarginTimes& t : times) {
    std::snprintf(line, sizeof line, ",%lld,%lld,%lld,%d,%d,%d,%.6e,%.6e,%.6e,%.6e,%.6e,%.6e\n",
                  static_cast<long long>(t.c.m), static_cast<long long>(t.c.n),
                  static_cast<long long>(t.c.k), t.c.num_sm, t.c.num_splits, t.sms, t.whole,
                  t.whole_target, t.split, t.split_target, t.held, t.held_target);
    out += t.c.name + line;
  }
  return out;
}

}  // namespace meshscope::kernels
