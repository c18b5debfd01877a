// What a command says while it reads a long trace: traces::ImportOptions::on_progress set to print
// one line to stderr about every 10 s, e.g. `analyze: rank0.json: 4.2 GB of 10.0 GB read (42%), 20
// s`.
#pragma once

#include <string>

#include "traces/import/import_types.h"

namespace meshscope::cli {

// Sets options.on_progress (and leaves its interval, 10 s by default); returns options.
traces::ImportOptions& report_read_progress(traces::ImportOptions& options,
                                            const std::string& command);

// A fresh ImportOptions that reports so.
traces::ImportOptions options_reporting_progress(const std::string& command);

}  // namespace meshscope::cli
