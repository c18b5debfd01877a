// --rank-from: how a command that reads several ranks' trace files numbers them. The importer's
// refusal of two files claiming one rank suggests `--rank-from file-order`, so every command that
// reads a job's files into one timeline takes it (analyze, convert, calibrate).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace meshscope::cli {

inline constexpr const char* kRankFromDistributedInfo = "distributed-info";
inline constexpr const char* kRankFromFileOrder = "file-order";

// Adds --rank-from to `cmd`, reading "distributed-info" (the default) or "file-order" into
// `rank_from`; returns the option (for needs/excludes).
CLI::Option* add_rank_from_option(CLI::App& cmd, std::string& rank_from);

}  // namespace meshscope::cli
