// One number through a printf format ("%.1f GiB"): the tables of predict and catalog share it.
#pragma once

#include <string>

namespace meshscope::cli {

std::string fmt(const char* format, double v);

}  // namespace meshscope::cli
