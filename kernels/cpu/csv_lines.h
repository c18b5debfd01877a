// The one reader of the small measurement CSV files meshscope takes: measured GEMM tables
// (sim/cost/gemm_table_fit.h), and the shapes and cases meshscope-kernel-check measures
// (gemm_shapes.h, sm_margin_cases.h). Host code under kernels/cpu so that both kernels/cuda and
// sim/cost use it, and its callers' tests run on machines without CUDA. The file must be a regular
// file of bounded size (no /dev/zero or FIFO read for ever); '\r' line ends, blank lines and '#'
// comments are skipped; a UTF-8 byte-order mark before the header (Excel's "CSV UTF-8") is dropped;
// the first other line is the header; every line after it has as many fields as the header (a
// field missing or one too many would shift a row's numbers into the wrong columns).
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace meshscope::kernels {

struct CsvFormat {
  std::string header;  // what the header line starts with, e.g. "b,m,n,k"
  int max_mib = 16;    // a larger file is refused before a line of it is read
  std::string what;    // what such a file is, for that refusal: "a table of GEMM rates"
  // How the refusal of a header names what it wants, after "want ": by default "a header starting
  // '<header>'".
  std::string header_wanted;
  // Shows a refused line in its message (the header, a row with the wrong field count), e.g.
  // traces::printable for files from elsewhere; unset, the line is not shown.
  std::function<std::string(const std::string&)> quote;
};

struct CsvLine {
  int number = 0;                   // in the file, from 1
  std::string text;                 // '\r' stripped
  std::vector<std::string> fields;  // text split at each ',' (a trailing ',' ends an empty one)
};

// The lines after the header. Throws std::runtime_error starting with the path: "not a regular
// file", "no such file or folder" (or stat's reason), "larger than <max_mib> MiB, not <what>",
// "cannot open: <reason>"; and with the line (path:line: ...): "want <header_wanted>[, got
// '<quoted>']", "<n> fields where the header has <m>[: '<quoted>']".
std::vector<CsvLine> read_csv_lines(const std::string& path, const CsvFormat& format);

// `text` split at each ','; a trailing ',' ends an empty field.
std::vector<std::string> split_csv_fields(const std::string& text);

}  // namespace meshscope::kernels
