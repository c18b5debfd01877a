// add_rank_from_option: see rank_from_option.h.
#include "cli/rank_from_option.h"

namespace meshscope::cli {

CLI::Option* add_rank_from_option(CLI::App& cmd, std::string& rank_from) {
  rank_from = kRankFromDistributedInfo;
  return cmd
      .add_option("--rank-from", rank_from,
                  "distributed-info: a file's rank is its distributedInfo.rank (files without one "
                  "take their position; two files of one rank are refused); file-order: the "
                  "files' positions (a folder's files sorted by name, numbers in numeric order: "
                  "rank2 before rank10)")
      ->check(CLI::IsMember({kRankFromDistributedInfo, kRankFromFileOrder}))
      ->capture_default_str();
}

}  // namespace meshscope::cli
