// The data lines of the small CSV files the measurement tools read (gemm_shapes.h's shapes,
// sm_margin_cases.h's cases): a regular file of bounded size (no /dev/zero read forever), blank
// lines and
// '#' comments skipped, a header line first.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace meshscope::kernels {

// Each line after the header, with its line number, '\r' stripped. Throws std::runtime_error
// naming the file: not a regular file of at most max_mib MiB, cannot open, or (with the line) a
// first line that does not start with `header`.
std::vector<std::pair<int, std::string>> read_csv_lines(const std::string& path, int max_mib,
                                                        const std::string& header);

}  // namespace meshscope::kernels
