// Number options read as numbers: CLI11 takes "" for 0 (`-m ""` said "microbatches must be >= 1,
// got 0") and "2.0" for an integer option reaches its range check ("Value 2.0 not in range 1 to
// 1048576"). This check runs first on every INT, UINT and FLOAT option of every command.
#pragma once

#include <CLI/CLI.hpp>

namespace meshscope::cli {

// Adds to each number option of `app` and its subcommands, ahead of its other checks, one that
// refuses an empty value ("an empty value is no number") and, for integer options, a value that
// is not a whole number in decimal digits ("'2.0' is not a whole number").
void check_number_syntax(CLI::App& app);

// A duration in seconds above 0 (--timeout); NaN and 0 are refused.
CLI::Validator positive_seconds();

}  // namespace meshscope::cli
