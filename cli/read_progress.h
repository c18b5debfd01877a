// What a command says while it reads a long trace: traces::ImportOptions::on_progress set to print
// one line to stderr about every 10 s, e.g. `analyze: rank0.json: 4.2 GB of 10.0 GB read (42%), 20
// s`.
#pragma once

#include <string>

#include "traces/import/import_types.h"

namespace meshscope::cli {

// Default ImportOptions with on_progress set so (its interval left at 10 s).
traces::ImportOptions options_reporting_progress(const std::string& command);

}  // namespace meshscope::cli
