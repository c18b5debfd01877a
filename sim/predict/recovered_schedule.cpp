// Recovering the schedule a torch.distributed.pipelining job ran from its ranks' action orders.
#include "sim/predict/recovered_schedule.h"

#include "sim/schedule/marker.h"
#include "sim/schedule/schedule_text.h"

namespace meshscope::predict {

RecoveredSchedule recover_schedule(const std::map<int, std::vector<std::string>>& orders,
                                   const std::vector<std::vector<int>>& groups,
                                   const std::string& path, bool groups_named) {
  if (orders.empty()) {
    throw RecoveryError(path +
                        ": no torch.distributed.pipelining actions in these traces (PP: ranges, "
                        "GPipe's Forward/Backward, or Schedule1F1B's send/recv ops)");
  }
  RecoveredSchedule out;
  out.groups = static_cast<int>(groups.size());
  if (groups.size() > 1) {
    out.ranks = groups.front();
    for (size_t g = 1; g < groups.size() && out.differing_rank < 0; ++g) {
      for (size_t k = 0; k < groups[g].size(); ++k) {
        const auto mine = orders.find(groups[g][k]);
        const auto first = k < out.ranks.size() ? orders.find(out.ranks[k]) : orders.end();
        if (mine == orders.end() || first == orders.end() || mine->second != first->second) {
          out.differing_rank = groups[g][k];
          break;
        }
      }
    }
  } else if (groups.size() == 1 && groups_named) {
    out.ranks = groups.front();
  } else {
    for (int r = 0; r <= orders.rbegin()->first; ++r) out.ranks.push_back(r);
  }
  bool transfers = false;
  std::vector<std::vector<std::string>> rows, compute_rows;  // each rank's cells
  for (const int rank : out.ranks) {
    const auto found = orders.find(rank);
    if (found == orders.end()) {
      throw RecoveryError(path + ": no trace of rank " + std::to_string(rank) + " (ranks " +
                          std::to_string(orders.begin()->first) + ".." +
                          std::to_string(orders.rbegin()->first) + " found)");
    }
    rows.push_back(found->second);
    compute_rows.emplace_back();
    for (const std::string& a : found->second) {
      transfers =
          transfers || a.find("SEND_") != std::string::npos || a.find("RECV_") != std::string::npos;
      if (a.find("REDUCE_GRAD") == std::string::npos) compute_rows.back().push_back(a);
    }
  }
  // The rows as torch's CSV: cells joined by ',', each row ended as Python's csv.writer ends it.
  const auto csv_of = [](const std::vector<std::vector<std::string>>& table) {
    std::string text;
    for (const std::vector<std::string>& cells : table) {
      for (size_t k = 0; k < cells.size(); ++k) text += (k == 0 ? "" : ",") + cells[k];
      text += "\r\n";
    }
    return text;
  };
  out.csv = csv_of(rows);
  const std::string compute_csv = csv_of(compute_rows);
  try {
    // A trace can end inside its step, its last sends not yet waited for: the validator, not the
    // reader, says what is missing.
    out.parsed = schedule::parse_torch_csv(transfers ? out.csv : compute_csv, path,
                                           /*check_send_waits=*/false);
  } catch (const schedule::ScheduleParseError& e) {
    // The CSV is meshscope's own text of the ranks' actions: its line and column would point into
    // no file (a folder's "job:1:85"), so the rank and its action are named instead.
    const std::vector<std::vector<std::string>>& parsed = transfers ? rows : compute_rows;
    std::string where;
    if (e.line() >= 1 && static_cast<size_t>(e.line()) <= parsed.size()) {
      const std::vector<std::string>& cells = parsed[e.line() - 1];
      where = "rank " + std::to_string(out.ranks[e.line() - 1]);
      int column = 1;
      for (size_t k = 0; k < cells.size() && e.column() >= 1; ++k) {
        const int next = column + static_cast<int>(cells[k].size()) + 1;
        if (e.column() < next) {
          where +=
              "'s action " + std::to_string(k + 1) + " (" + schedule::quote_token(cells[k]) + ")";
          break;
        }
        column = next;
      }
      where += ": ";
    }
    throw RecoveryError(path + ": the schedule recovered from the trace: " + where + e.reason());
  }
  return out;
}

}  // namespace meshscope::predict
