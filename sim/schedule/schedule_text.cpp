// Loader and writer of the schedule text format described in schedule_text.h.
#include "sim/schedule/schedule_text.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <span>
#include <sstream>
#include <vector>

#include "traces/atomic_file.h"
#include "traces/input_file.h"
#include "traces/printable.h"

namespace meshscope::schedule {
namespace {

// The parser quotes input in its reasons through printable() (short); this bounds the whole
// reason as a last resort (a header line quoting several words).
constexpr size_t kMaxReasonBytes = 400;

constexpr std::string_view kVersionPrefix = "# meshscope schedule v";
constexpr int kVersion = 1;

struct Word {
  std::string_view text;
  int column = 0;  // 1-based
};

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

std::vector<Word> split_words(std::string_view line) {
  std::vector<Word> words;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_blank(line[i])) ++i;
    const size_t begin = i;
    while (i < line.size() && !is_blank(line[i])) ++i;
    if (i > begin) words.push_back({line.substr(begin, i - begin), static_cast<int>(begin) + 1});
  }
  return words;
}

std::optional<int64_t> parse_int(std::string_view s, int64_t min, int64_t max) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  if (v < min || v > max) return std::nullopt;
  return v;
}

class Parser {
 public:
  Parser(std::string_view source, ScheduleTextPositions* positions)
      : source_(source), positions_(positions) {}

  Schedule run(std::string_view text) {
    size_t begin = 0;
    while (begin < text.size()) {
      size_t end = text.find('\n', begin);
      if (end == std::string_view::npos) end = text.size();
      ++line_;
      parse_line(text.substr(begin, end - begin));
      begin = end + 1;
    }
    if (line_ == 0) line_ = 1;  // an empty text: blame its first line
    if (!header_done_) finish_header(1);
    for (size_t r = 0; r < seen_rank_.size(); ++r) {
      if (!seen_rank_[r])
        fail(0, "rank " + std::to_string(r) + " has no 'rank " + std::to_string(r) +
                    ":' line (the mesh has " + std::to_string(seen_rank_.size()) + " ranks)");
    }
    return std::move(s_);
  }

 private:
  [[noreturn]] void fail(int column, const std::string& reason) const {
    throw ScheduleParseError(std::string(source_), line_, column, reason);
  }

  void parse_line(std::string_view line) {
    check_version(line);
    const size_t hash = line.find('#');
    if (hash != std::string_view::npos) line = line.substr(0, hash);
    const std::vector<Word> words = split_words(line);
    if (words.empty()) return;
    const std::string_view key = words[0].text;
    const bool rank_line = key == "rank" || (key.size() > 4 && key.starts_with("rank") &&
                                             (key[4] == ':' || (key[4] >= '0' && key[4] <= '9')));
    if (rank_line) return parse_rank(line, words);
    if (header_done_) {
      fail(words[0].column, "header '" + traces::printable(key) + "' after the first rank line");
    }
    if (key == "name") return parse_name(words);
    if (key == "mesh") return parse_mesh(words);
    if (key == "stages") return parse_count(words, &stages_, kMaxStages);
    if (key == "microbatches") return parse_count(words, &microbatches_, kMaxMicrobatches);
    if (key == "stage_owner") return parse_owner(words);
    fail(words[0].column, "unknown keyword '" + traces::printable(key) +
                              "' (expected name, mesh, stages, microbatches, stage_owner or rank)");
  }

  void check_version(std::string_view line) {
    if (!line.starts_with(kVersionPrefix)) return;
    const std::string_view v = line.substr(kVersionPrefix.size());
    const std::vector<Word> words = split_words(v);
    if (words.empty() || parse_int(words[0].text, 0, 1 << 30) != kVersion) {
      fail(static_cast<int>(kVersionPrefix.size()) + 1,
           "unsupported schedule format version 'v" +
               traces::printable(words.empty() ? "" : words[0].text) + "' (this build reads v1)");
    }
  }

  void once(bool* seen, const Word& w) {
    if (*seen) fail(w.column, "'" + traces::printable(w.text) + "' given twice");
    *seen = true;
  }

  void expect_args(const std::vector<Word>& words, size_t n) {
    if (words.size() < n + 1) fail(0, "'" + traces::printable(words[0].text) + "' needs a value");
    if (words.size() > n + 1) {
      fail(words[n + 1].column, "unexpected '" + traces::printable(words[n + 1].text) + "'");
    }
  }

  void parse_name(const std::vector<Word>& words) {
    once(&seen_name_, words[0]);
    expect_args(words, 1);
    if (words[1].text.size() > kMaxScheduleNameBytes ||
        traces::printable(words[1].text, kMaxScheduleNameBytes) != words[1].text)
      fail(words[1].column, "name must be at most " + std::to_string(kMaxScheduleNameBytes) +
                                " bytes without control characters, got '" +
                                traces::printable(words[1].text) + "'");
    s_.name = std::string(words[1].text);
  }

  void parse_count(const std::vector<Word>& words, std::optional<int>* out, int max) {
    if (out->has_value())
      fail(words[0].column, "'" + traces::printable(words[0].text) + "' given twice");
    expect_args(words, 1);
    const std::optional<int64_t> v = parse_int(words[1].text, 1, max);
    if (!v) {
      fail(words[1].column, "'" + traces::printable(words[0].text) +
                                "' must be an integer in [1, " + std::to_string(max) + "], got '" +
                                traces::printable(words[1].text) + "'");
    }
    *out = static_cast<int>(*v);
  }

  void parse_mesh(const std::vector<Word>& words) {
    once(&seen_mesh_, words[0]);
    if (words.size() < 2) fail(0, "'mesh' needs dimensions like 'dp=1 pp=4 tp=1'");
    bool seen[3] = {false, false, false};
    int* dims[3] = {&s_.mesh.dp, &s_.mesh.pp, &s_.mesh.tp};
    constexpr std::string_view kNames[3] = {"dp", "pp", "tp"};
    for (size_t i = 1; i < words.size(); ++i) {
      const std::string_view w = words[i].text;
      const size_t eq = w.find('=');
      int d = 0;
      while (d < 3 && (eq == std::string_view::npos || w.substr(0, eq) != kNames[d])) ++d;
      if (d == 3)
        fail(words[i].column, "expected dp=N, pp=N or tp=N, got '" + traces::printable(w) + "'");
      if (seen[d]) fail(words[i].column, std::string(kNames[d]) + " given twice");
      seen[d] = true;
      const std::optional<int64_t> v = parse_int(w.substr(eq + 1), 1, kMaxRanks);
      if (!v) {
        fail(words[i].column + static_cast<int>(eq) + 1,
             std::string(kNames[d]) + " must be an integer in [1, " + std::to_string(kMaxRanks) +
                 "], got '" + traces::printable(w.substr(eq + 1)) + "'");
      }
      *dims[d] = static_cast<int>(*v);
    }
    if (int64_t{s_.mesh.dp} * s_.mesh.pp * s_.mesh.tp > kMaxRanks) {
      fail(words[0].column,
           "mesh " + to_string(s_.mesh) + " has more than " + std::to_string(kMaxRanks) + " ranks");
    }
  }

  void parse_owner(const std::vector<Word>& words) {
    once(&seen_owner_, words[0]);
    if (words.size() < 2) fail(0, "'stage_owner' needs one pp coordinate per stage");
    if (words.size() - 1 > static_cast<size_t>(kMaxStages)) fail(0, "too many stage owners");
    for (size_t i = 1; i < words.size(); ++i) {
      const std::optional<int64_t> v = parse_int(words[i].text, 0, kMaxRanks);
      if (!v)
        fail(words[i].column,
             "stage owner must be a pp coordinate, got '" + traces::printable(words[i].text) + "'");
      s_.stage_owner.push_back(static_cast<int>(*v));
      owner_columns_.push_back(words[i].column);
      owner_line_ = line_;
    }
  }

  void finish_header(int column) {
    header_done_ = true;
    if (!seen_mesh_) fail(column, "missing 'mesh' header before the rank lines");
    if (!microbatches_) fail(column, "missing 'microbatches' header before the rank lines");
    s_.num_microbatches = *microbatches_;
    s_.num_stages = stages_.value_or(s_.mesh.pp);
    if (!seen_name_) s_.name = "custom";
    if (!seen_owner_) {
      for (int st = 0; st < s_.num_stages; ++st) s_.stage_owner.push_back(st % s_.mesh.pp);
    }
    if (static_cast<int>(s_.stage_owner.size()) != s_.num_stages) {
      fail(column, "stage_owner lists " + std::to_string(s_.stage_owner.size()) + " owners for " +
                       std::to_string(s_.num_stages) + " stages");
    }
    for (size_t st = 0; st < s_.stage_owner.size(); ++st) {
      if (s_.stage_owner[st] >= s_.mesh.pp) {
        throw ScheduleParseError(std::string(source_), owner_line_, owner_columns_[st],
                                 "stage " + std::to_string(st) + " is owned by pp " +
                                     std::to_string(s_.stage_owner[st]) +
                                     ", outside pp=" + std::to_string(s_.mesh.pp));
      }
    }
    s_.ranks.assign(s_.mesh.size(), {});
    seen_rank_.assign(s_.mesh.size(), false);
  }

  void parse_rank(std::string_view line, const std::vector<Word>& words) {
    if (!header_done_) finish_header(words[0].column);
    const size_t kw = static_cast<size_t>(words[0].column - 1);
    const size_t colon = line.find(':', kw);
    if (line.substr(kw, 4) != "rank" || colon == std::string_view::npos) {
      fail(words[0].column, "expected 'rank N:' followed by actions");
    }
    std::string_view number = line.substr(kw + 4, colon - kw - 4);
    const size_t first = number.find_first_not_of(" \t");
    const size_t last = number.find_last_not_of(" \t");
    const int number_col =
        static_cast<int>(kw + 4 + (first == std::string_view::npos ? 0 : first)) + 1;
    number = first == std::string_view::npos ? std::string_view{}
                                             : number.substr(first, last - first + 1);
    const std::optional<int64_t> r = parse_int(number, 0, s_.mesh.size() - 1);
    if (!r) {
      fail(number_col, "rank must be an integer in [0, " + std::to_string(s_.mesh.size() - 1) +
                           "] for mesh " + to_string(s_.mesh) + ", got '" +
                           traces::printable(number) + "'");
    }
    if (seen_rank_[*r]) fail(number_col, "rank " + std::to_string(*r) + " has two lines");
    seen_rank_[*r] = true;
    if (positions_ != nullptr) {
      positions_->rank_line.resize(s_.ranks.size(), 0);
      positions_->action_column.resize(s_.ranks.size());
      positions_->rank_line[*r] = line_;
    }
    // The actions just added (one, or an OVERLAP_F_B group's) are at `column`.
    const auto place = [&](int column) {
      if (positions_ != nullptr) positions_->action_column[*r].resize(s_.ranks[*r].size(), column);
    };
    const std::string_view actions = line.substr(colon + 1);
    std::vector<Action>& out = s_.ranks[*r];
    std::string error;
    for (const Word& w : split_words(actions)) {
      const int column = static_cast<int>(colon) + 1 + w.column;
      if (w.text.starts_with('(')) {
        std::optional<std::vector<Action>> group = parse_overlap(w.text, &error);
        if (!group) fail(column, error);
        out.insert(out.end(), group->begin(), group->end());
        place(column);
        continue;
      }
      std::optional<Action> a = parse_action(w.text, &error);
      if (a) {
        out.push_back(*a);
        place(column);
        continue;
      }
      std::optional<Marker> m =
          w.text == kIdleText ? Marker{.kind = MarkerKind::kIdle} : parse_marker(w.text, nullptr);
      if (!m) fail(column, error);
      if (s_.markers.empty()) s_.markers.resize(s_.ranks.size());
      m->before = static_cast<int32_t>(out.size());
      s_.markers[*r].push_back(*m);
    }
  }

  std::string_view source_;
  ScheduleTextPositions* positions_ = nullptr;
  int line_ = 0;
  Schedule s_;
  bool header_done_ = false;
  bool seen_name_ = false, seen_mesh_ = false, seen_owner_ = false;
  std::optional<int> stages_, microbatches_;
  std::vector<int> owner_columns_;
  int owner_line_ = 0;
  std::vector<bool> seen_rank_;
};

std::string too_large(uintmax_t size) {
  return (size > 0 ? "is " + std::to_string(size) + " bytes, more" : std::string("has more")) +
         " than the " + std::to_string(kMaxScheduleFileBytes >> 20) +
         " MiB a schedule file may have";
}

std::string format_location(const std::string& source, int line, int column) {
  std::string out = traces::printable(source, 200);
  if (line > 0) out += ":" + std::to_string(line);
  if (line > 0 && column > 0) out += ":" + std::to_string(column);
  return out;
}

}  // namespace

ScheduleParseError::ScheduleParseError(std::string source, int line, int column,
                                       const std::string& reason)
    : std::runtime_error(format_location(source, line, column) + ": " +
                         traces::printable(reason, kMaxReasonBytes)),
      source_(std::move(source)),
      line_(line),
      column_(column),
      reason_(reason) {}

std::string dump(const Schedule& s) {
  std::string out;
  out += std::string(kVersionPrefix) + std::to_string(kVersion) + "\n";
  out += "# ranks: tp innermost, then pp, then dp; p2p peers are global ranks\n";
  out += "name " + (s.name.empty() ? std::string("custom") : s.name) + "\n";
  out += "mesh " + to_string(s.mesh) + "\n";
  out += "stages " + std::to_string(s.num_stages) + "\n";
  out += "microbatches " + std::to_string(s.num_microbatches) + "\n";
  out += "stage_owner";
  for (int owner : s.stage_owner) out += " " + std::to_string(owner);
  out += "\n";
  for (size_t r = 0; r < s.ranks.size(); ++r) {
    out += "rank " + std::to_string(r) + ":";
    const std::vector<Action>& actions = s.ranks[r];
    const std::vector<Marker>* markers = r < s.markers.size() ? &s.markers[r] : nullptr;
    size_t next = 0;
    const auto flush_markers = [&](size_t before) {
      while (markers && next < markers->size() &&
             (*markers)[next].before <= static_cast<int>(before)) {
        const Marker& m = (*markers)[next++];
        out += ' ';
        out += m.kind == MarkerKind::kIdle ? std::string(kIdleText) : to_string(m);
      }
    };
    for (size_t i = 0; i < actions.size(); ++i) {
      flush_markers(i);
      size_t end = i + 1;
      while (end < actions.size() && actions[end - 1].overlap_next) ++end;
      out += ' ';
      if (end - i > 1) {
        out += overlap_to_string(std::span(actions).subspan(i, end - i));
        i = end - 1;
      } else {
        out += to_string(actions[i]);
      }
    }
    flush_markers(actions.size());
    out += '\n';
  }
  return out;
}

Schedule load(std::string_view text, std::string_view source_name,
              ScheduleTextPositions* positions) {
  if (positions != nullptr) *positions = {};
  return Parser(source_name, positions).run(text);
}

std::string read_schedule_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw ScheduleParseError(path, 0, 0, "is a directory, not a schedule file");
  std::string why;
  std::optional<traces::InputFile> in = traces::InputFile::open(path, why);
  if (!in) throw ScheduleParseError(path, 0, 0, "cannot open: " + why);
  // A regular file by its size; anything else (/dev/zero, a pipe) read at most a chunk past the
  // limit, so that it is refused after 64 MiB instead of exhausting memory.
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > kMaxScheduleFileBytes) throw ScheduleParseError(path, 0, 0, too_large(size));
  std::optional<std::string> text = in->read_all(kMaxScheduleFileBytes, why, too_large(0));
  if (!text) throw ScheduleParseError(path, 0, 0, why);
  return std::move(*text);
}

Schedule load_file(const std::string& path) { return load(read_schedule_file(path), path); }

void save_file(const Schedule& schedule, const std::string& path) {
  traces::write_file_atomic(path, dump(schedule));
}

}  // namespace meshscope::schedule
