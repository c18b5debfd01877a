// Reader and writer of torch.distributed.pipelining's schedule CSV (see torch_csv.h).
#include "sim/schedule/torch_csv.h"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <vector>

#include "sim/schedule/lowering.h"
#include "sim/schedule/schedule_text.h"
#include "traces/enum_names.h"

namespace meshscope::schedule {
namespace {

bool reduces_grad(const Marker& m) {
  return m.kind == MarkerKind::kReduceGrad || m.kind == MarkerKind::kWaitReduceGrad;
}

struct Cell {
  std::string text;
  int column = 0;  // 1-based byte column of the cell's first byte
};

// What one cell holds: compute or p2p actions (several for an OVERLAP_F_B group) or a marker.
struct ParsedCell {
  std::vector<Action> actions;
  std::optional<Marker> marker;
  int column = 0;
};

class Reader {
 public:
  Reader(std::string_view source, bool check_send_waits)
      : source_(source), check_send_waits_(check_send_waits) {}

  TorchCsv run(std::string_view text) {
    std::vector<std::vector<ParsedCell>> rows;
    size_t begin = 0;
    while (begin < text.size()) {
      size_t end = text.find('\n', begin);
      const bool last = end == std::string_view::npos;
      if (last) end = text.size();
      std::string_view line = text.substr(begin, end - begin);
      if (line.ends_with('\r')) line.remove_suffix(1);
      ++line_;
      rows.push_back(parse_row(line));
      begin = end + 1;
    }
    if (rows.empty()) fail(1, 0, "empty file: a torch schedule CSV has one row per pp rank");
    if (rows.size() > static_cast<size_t>(kMaxRanks)) fail(0, 0, "too many rows");
    return build(rows);
  }

 private:
  [[noreturn]] void fail(int line, int column, const std::string& reason) const {
    throw ScheduleParseError(std::string(source_), line, column, reason);
  }

  // Splits one line into cells as Python's csv reader does (quotes optional, "" inside quotes).
  std::vector<ParsedCell> parse_row(std::string_view line) {
    std::vector<ParsedCell> out;
    if (line.empty()) return out;  // csv.reader: a blank line is a row without cells
    size_t i = 0;
    while (true) {
      Cell cell;
      cell.column = static_cast<int>(i) + 1;
      if (i < line.size() && line[i] == '"') {
        ++i;
        while (true) {
          if (i >= line.size()) fail(line_, cell.column, "unterminated quote");
          if (line[i] == '"') {
            if (i + 1 < line.size() && line[i + 1] == '"') {
              cell.text += '"';
              i += 2;
              continue;
            }
            ++i;
            break;
          }
          cell.text += line[i++];
        }
        if (i < line.size() && line[i] != ',') {
          fail(line_, static_cast<int>(i) + 1,
               "unexpected " + quote_token(line.substr(i, 1)) + " after a quoted cell");
        }
      } else {
        const size_t comma = std::min(line.find(',', i), line.size());
        cell.text = std::string(line.substr(i, comma - i));
        i = comma;
      }
      out.push_back(parse_cell(cell));
      if (i >= line.size()) break;
      ++i;  // the comma
      if (i == line.size()) {
        Cell empty;
        empty.column = static_cast<int>(i) + 1;
        out.push_back(parse_cell(empty));
        break;
      }
    }
    return out;
  }

  ParsedCell parse_cell(const Cell& cell) {
    ParsedCell out;
    out.column = cell.column;
    std::string_view t = cell.text;
    while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
    while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.remove_suffix(1);
    if (t != cell.text)
      fail(line_, cell.column, "blanks around " + quote_token(cell.text) + " (torch writes none)");
    if (t.empty()) {
      out.marker = Marker{.kind = MarkerKind::kIdle};
      return out;
    }
    // The parsers below quote the token whole; keep that short and printable.
    const bool plain = t.size() <= 40 && std::all_of(t.begin(), t.end(), [](char ch) {
                         return ch > ' ' && ch < 0x7f && ch != '\'' && ch != '\\';
                       });
    if (!plain) fail(line_, cell.column, "not a torch action: " + quote_token(t));
    std::string error;
    if (t.front() == '(') {
      std::optional<std::vector<Action>> group = parse_overlap(t, &error);
      if (!group) fail(line_, cell.column, error);
      out.actions = std::move(*group);
      return out;
    }
    const bool torch_action = t.find_first_of("@:(") == std::string_view::npos;
    if (std::optional<Action> a = parse_action(t, &error); a && torch_action) {
      if (!is_compute(a->kind) && !is_p2p(a->kind)) {
        fail(line_, cell.column,
             quote_token(t) + " is a meshscope action torch's CSV does not have (" +
                 "F, B, I, W, SEND_F, RECV_F, SEND_B, RECV_B, UNSHARD, RESHARD, REDUCE_GRAD, " +
                 "WAIT_REDUCE_GRAD, WAIT_SEND_F, WAIT_SEND_B, OVERLAP_F_B)");
      }
      out.actions.push_back(*a);
      return out;
    } else if (a) {
      fail(line_, cell.column, quote_token(t) + ": torch's CSV has no peers or byte counts");
    }
    std::string marker_error;
    std::optional<Marker> m = parse_marker(t, &marker_error);
    if (!m) fail(line_, cell.column, error);
    out.marker = *m;
    return out;
  }

  // The stage placement, counts and format, then each row lowered (compute_only) or kept.
  TorchCsv build(const std::vector<std::vector<ParsedCell>>& rows) {
    TorchCsv out;
    Schedule& s = out.schedule;
    const int pp = static_cast<int>(rows.size());
    s.name = "torch";
    s.mesh = {.dp = 1, .pp = pp, .tp = 1};
    std::vector<int> owner, owner_line;
    int max_mb = -1;
    bool comms = false, idle = false, reduce_grad = false, waits_sends = false;
    int idle_line = 0, idle_col = 0;
    const auto own = [&](int stage, int rank, int column) {
      if (stage >= kMaxStages)
        fail(rank + 1, column, "stage " + std::to_string(stage) + " is too large");
      if (stage >= static_cast<int>(owner.size())) {
        owner.resize(stage + 1, -1);
        owner_line.resize(stage + 1, 0);
      }
      if (owner[stage] >= 0 && owner[stage] != rank) {
        fail(rank + 1, column,
             "stage " + std::to_string(stage) + " is on row " + std::to_string(owner[stage] + 1) +
                 " and row " + std::to_string(rank + 1) + "; a stage lives on one rank");
      }
      owner[stage] = rank;
      owner_line[stage] = rank + 1;
    };
    for (int r = 0; r < pp; ++r) {
      for (const ParsedCell& c : rows[r]) {
        for (const Action& a : c.actions) {
          own(a.stage, r, c.column);
          if (is_p2p(a.kind)) comms = true;
          if (a.microbatch >= kMaxMicrobatches) fail(r + 1, c.column, "microbatch too large");
          max_mb = std::max(max_mb, static_cast<int>(a.microbatch));
        }
        // REDUCE_GRAD and WAIT_REDUCE_GRAD with no transfer: pipeline_order (torch_csv.h).
        if (c.marker && c.marker->kind != MarkerKind::kIdle) {
          own(c.marker->stage, r, c.column);
          if (reduces_grad(*c.marker))
            reduce_grad = true;
          else
            comms = true;
          waits_sends = waits_sends || has_microbatch(c.marker->kind);
        }
        if (c.marker && c.marker->kind == MarkerKind::kIdle && !idle) {
          idle = true;
          idle_line = r + 1;
          idle_col = c.column;
        }
      }
    }
    if (owner.empty()) fail(1, 0, "no actions: every row is empty");
    // A row is a pp rank, and every rank runs a stage: a blank line is a row to csv.reader, and
    // torch refuses the file ("Schedule has incorrect number of ranks").
    for (int r = 0; r < pp; ++r) {
      if (std::find(owner.begin(), owner.end(), r) == owner.end())
        fail(r + 1, 0,
             "row " + std::to_string(r + 1) + " runs no stage" +
                 (rows[r].empty() ? " (a blank line)" : "") +
                 ": each row is a pp rank, and every rank runs one");
    }
    for (size_t st = 0; st < owner.size(); ++st) {
      if (owner[st] < 0) {
        fail(0, 0,
             "stage " + std::to_string(st) + " appears nowhere, but stage " +
                 std::to_string(owner.size() - 1) + " does (stages are numbered from 0)");
      }
    }
    if (comms && idle) {
      fail(idle_line, idle_col,
           "empty cell in a compute_comms schedule (one with SEND/RECV, UNSHARD, REDUCE_GRAD or "
           "WAIT rows); torch's runtime rejects None there");
    }
    if (comms && waits_sends && check_send_waits_) {
      for (int r = 0; r < pp; ++r) check_send_waits(r, rows[r]);
    }
    out.format = comms         ? TorchCsvFormat::kComputeComms
                 : reduce_grad ? TorchCsvFormat::kPipelineOrder
                               : TorchCsvFormat::kComputeOnly;
    s.num_stages = static_cast<int>(owner.size());
    s.stage_owner = owner;
    s.num_microbatches = std::max(1, max_mb + 1);
    s.ranks.resize(pp);
    s.markers.resize(pp);
    out.positions.rank_line.resize(pp);
    out.positions.action_column.resize(pp);
    for (int r = 0; r < pp; ++r) {
      out.positions.rank_line[r] = r + 1;
      if (comms) {
        keep_row(rows[r], &s.ranks[r], &s.markers[r], s.num_stages,
                 &out.positions.action_column[r]);
      } else {
        lower_row(s, r, rows[r], &out.positions.action_column[r]);
      }
    }
    return out;
  }

  // torch 2.15 refuses a compute_comms schedule unless each rank's every send is retired by one
  // WAIT_SEND after it (schedules.py, _validate_send_waits, run by _load_csv): a send twice, a
  // wait with no send pending, a send never waited for. meshscope's sends are eager and it keeps
  // the waits as markers, so nothing else would catch a file torch cannot load. Checked in a file
  // with WAIT_SEND cells: torch before WAIT_SEND wrote and read compute_comms without them.
  void check_send_waits(int rank, const std::vector<ParsedCell>& row) const {
    struct Send {
      ActionKind kind;
      int32_t stage, microbatch;
      auto operator<=>(const Send&) const = default;
    };
    std::map<Send, int> pending;  // each with its cell's column
    std::set<Send> sent;
    const auto name = [](const Send& s, std::string_view prefix = "") {
      return quote_token(std::to_string(s.stage) + std::string(prefix) +
                         std::string(token(s.kind)) + std::to_string(s.microbatch));
    };
    for (const ParsedCell& c : row) {
      for (const Action& a : c.actions) {
        if (!is_send(a.kind)) continue;
        const Send s{a.kind, a.stage, a.microbatch};
        if (!sent.insert(s).second)
          fail(rank + 1, c.column,
               name(s) +
                   " a second time on this row (torch refuses it: \"Duplicate pipeline send\")");
        pending[s] = c.column;
      }
      if (!c.marker || !has_microbatch(c.marker->kind)) continue;
      const Send s{c.marker->kind == MarkerKind::kWaitSendForward ? ActionKind::kSendForward
                                                                  : ActionKind::kSendBackward,
                   c.marker->stage, c.marker->microbatch};
      if (pending.erase(s) == 0) {
        fail(rank + 1, c.column,
             quote_token(to_string(*c.marker)) + " waits for " + name(s) +
                 ", which no earlier cell of this row sends (torch refuses it: \"no pending "
                 "send\")");
      }
    }
    if (!pending.empty()) {
      const auto& [s, column] =
          *std::min_element(pending.begin(), pending.end(),
                            [](const auto& x, const auto& y) { return x.second < y.second; });
      fail(rank + 1, column,
           name(s) + " has no " + name(s, "WAIT_") + " after it on this row" +
               (pending.size() > 1
                    ? " (nor " + std::to_string(pending.size() - 1) + " more of its sends)"
                    : "") +
               "; torch refuses a compute_comms schedule whose sends it does not wait for");
    }
  }

  // compute_comms: every action as it stands, STEP after each stage's last gradient work and
  // the sends of that stage that follow it, as meshscope's lowering places it (lowering.h); torch
  // steps after the schedule. A STEP between the last backward and its send held the peer's
  // backward behind the optimizer.
  static void keep_row(const std::vector<ParsedCell>& row, std::vector<Action>* actions,
                       std::vector<Marker>* markers, int num_stages, std::vector<int>* columns) {
    std::vector<int> grads_left(num_stages, 0);
    for (const ParsedCell& c : row) {
      for (const Action& a : c.actions) {
        if (a.kind == ActionKind::kBackward || a.kind == ActionKind::kWeightGrad)
          ++grads_left[a.stage];
      }
    }
    std::vector<int> steps_due;  // stages whose gradient work is done, their sends still to come
    const auto step_now = [&] {
      for (const int stage : steps_due) {
        actions->push_back(Action{.kind = ActionKind::kOptimizerStep, .stage = stage});
        columns->push_back(0);
      }
      steps_due.clear();
    };
    for (const ParsedCell& c : row) {
      if (c.marker) {
        Marker m = *c.marker;
        m.before = static_cast<int32_t>(actions->size());
        markers->push_back(m);
        continue;
      }
      for (const Action& a : c.actions) {
        const bool their_send = is_send(a.kind) && std::find(steps_due.begin(), steps_due.end(),
                                                             a.stage) != steps_due.end();
        if (!their_send) step_now();
        actions->push_back(a);
        columns->push_back(c.column);
      }
      for (const Action& a : c.actions) {
        const bool grad = a.kind == ActionKind::kBackward || a.kind == ActionKind::kWeightGrad;
        if (grad && --grads_left[a.stage] == 0) steps_due.push_back(a.stage);
      }
    }
    step_now();
  }

  // compute_only: meshscope's lowering; idle cells stay before the block of the next compute.
  static void lower_row(Schedule& s, int rank, const std::vector<ParsedCell>& row,
                        std::vector<int>* columns) {
    std::vector<Action> order;
    std::vector<int> order_column;
    std::vector<std::pair<int, Marker>> marks;  // each with the compute index it precedes
    for (const ParsedCell& c : row) {
      if (c.marker) marks.emplace_back(static_cast<int>(order.size()), *c.marker);
      for (const Action& a : c.actions) {
        order.push_back(a);
        order_column.push_back(c.column);
      }
    }
    std::vector<int> block_start;
    s.ranks[rank] = Lowering(s, {}, {}).lower(rank, order, &block_start);
    columns->assign(s.ranks[rank].size(), 0);  // past the last block: the steps, the line alone
    for (size_t k = 0; k < order.size(); ++k)
      std::fill(columns->begin() + block_start[k], columns->begin() + block_start[k + 1],
                order_column[k]);
    for (auto [k, m] : marks) {  // idle cells, and pipeline_order's gradient reductions
      m.before = block_start[k];
      s.markers[rank].push_back(m);
    }
  }

  std::string_view source_;
  bool check_send_waits_;
  int line_ = 0;
};

bool written_in(const Marker& m, TorchCsvFormat f) {
  switch (f) {
    case TorchCsvFormat::kComputeComms:
      return m.kind != MarkerKind::kIdle;
    case TorchCsvFormat::kPipelineOrder:
      return m.kind == MarkerKind::kIdle || reduces_grad(m);
    default:
      return m.kind == MarkerKind::kIdle;
  }
}

}  // namespace

std::optional<TorchCsvFormat> parse_torch_csv_format(std::string_view s) {
  return traces::parse_enum<TorchCsvFormat>(kTorchCsvFormatNames, s);
}

TorchCsv parse_torch_csv(std::string_view text, std::string_view source_name,
                         bool check_send_waits) {
  return Reader(source_name, check_send_waits).run(text);
}

std::string invalid_schedule_message(const Schedule& s, const std::string& error_message) {
  const std::string hint = torch_forward_numbering_hint(s);
  return hint.empty() ? error_message : error_message + "; " + hint;
}

std::string torch_forward_numbering_hint(const Schedule& s) {
  for (size_t r = 0; r < s.ranks.size(); ++r) {
    std::map<int, std::pair<std::set<int32_t>, std::set<int32_t>>> by_stage;  // forwards, backwards
    for (const Action& a : s.ranks[r]) {
      if (a.kind == ActionKind::kForward) by_stage[a.stage].first.insert(a.microbatch);
      if (a.kind == ActionKind::kBackward) by_stage[a.stage].second.insert(a.microbatch);
    }
    if (by_stage.size() != 1) continue;
    const auto& [forwards, backwards] = by_stage.begin()->second;
    const int32_t n = static_cast<int32_t>(backwards.size());
    if (n == 0 || forwards.size() != backwards.size() || *forwards.begin() != 1 ||
        *forwards.rbegin() != n || *backwards.begin() != 0 || *backwards.rbegin() != n - 1)
      continue;
    const std::string last = std::to_string(n);
    const std::string before = std::to_string(n - 1);
    return "rank " + std::to_string(r) + "'s forwards are numbered 1.." + last +
           " and its backwards 0.." + before +
           ", as torch 2.15's Schedule1F1B.pipeline_order numbers the last rank's forwards, which "
           "its runtime runs as 0.." +
           before +
           ": renumber them from 0, or recover the schedule that ran from the run's traces "
           "(`meshscope schedules --from-trace DIR`)";
  }
  return "";
}

std::string write_torch_csv(const Schedule& s, TorchCsvFormat format) {
  if (s.mesh.dp != 1 || s.mesh.tp != 1) {
    throw std::invalid_argument(
        "torch's schedule CSV holds one pipeline (dp=1, tp=1); this "
        "schedule's mesh is " +
        to_string(s.mesh));
  }
  std::string out;
  for (size_t r = 0; r < s.ranks.size(); ++r) {
    const std::vector<Action>& actions = s.ranks[r];
    static const std::vector<Marker> kNone;
    const std::vector<Marker>& markers = r < s.markers.size() ? s.markers[r] : kNone;
    std::vector<std::string> cells;
    // compute_comms: the sends written with no WAIT_SEND after them yet, in send order. torch's
    // _load_csv refuses a send without its wait ("Pipeline sends at rank 0 have no matching
    // wait"); a schedule without torch's markers (a generated one) gets them at the row's end,
    // where torch's own lowering waits for its backward sends: after the peer posted its receive.
    std::vector<Marker> unwaited;
    const auto wait_for = [](const Action& send) {
      return Marker{.kind = send.kind == ActionKind::kSendForward ? MarkerKind::kWaitSendForward
                                                                  : MarkerKind::kWaitSendBackward,
                    .stage = send.stage,
                    .microbatch = send.microbatch};
    };
    size_t next_marker = 0;
    const auto flush_markers = [&](size_t before) {
      while (next_marker < markers.size() &&
             markers[next_marker].before <= static_cast<int>(before)) {
        const Marker& m = markers[next_marker];
        if (written_in(m, format)) cells.push_back(to_string(m));
        const auto waited = std::find_if(unwaited.begin(), unwaited.end(), [&](const Marker& u) {
          return u.kind == m.kind && u.stage == m.stage && u.microbatch == m.microbatch;
        });
        if (waited != unwaited.end()) unwaited.erase(waited);
        ++next_marker;
      }
    };
    for (size_t i = 0; i < actions.size(); ++i) {
      flush_markers(i);
      const Action& a = actions[i];
      if (is_collective(a.kind)) {
        throw std::invalid_argument("rank " + std::to_string(r) + " action " + std::to_string(i) +
                                    " '" + to_string(a) + "': torch's CSV has no collectives");
      }
      if (a.kind == ActionKind::kOptimizerStep) continue;  // torch steps outside the schedule
      if (is_p2p(a.kind)) {
        if (format == TorchCsvFormat::kComputeComms) {
          cells.push_back(
              to_string(Action{.kind = a.kind, .stage = a.stage, .microbatch = a.microbatch}));
          if (is_send(a.kind)) unwaited.push_back(wait_for(a));
        }
        continue;
      }
      size_t end = i + 1;
      while (end < actions.size() && actions[end - 1].overlap_next) ++end;
      if (end - i > 1) {
        for (size_t k = i; k < end; ++k) {
          if (!is_compute(actions[k].kind)) {
            throw std::invalid_argument("rank " + std::to_string(r) + " action " +
                                        std::to_string(k) + " '" + to_string(actions[k]) +
                                        "': an OVERLAP_F_B group holds compute actions only");
          }
        }
        cells.push_back(overlap_to_string(std::span(actions).subspan(i, end - i)));
        i = end - 1;
      } else {
        cells.push_back(to_string(a));
      }
    }
    flush_markers(actions.size());
    for (Marker& m : unwaited) {
      m.before = static_cast<int32_t>(actions.size());
      cells.push_back(to_string(m));
    }
    // csv.writer quotes a row made of one empty cell, so that it is not read as a blank row.
    if (cells.size() == 1 && cells[0].empty()) {
      out += "\"\"";
    } else {
      for (size_t c = 0; c < cells.size(); ++c) {
        if (c > 0) out += ',';
        out += cells[c];
      }
    }
    out += "\r\n";
  }
  return out;
}

}  // namespace meshscope::schedule
