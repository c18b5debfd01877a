// load_schedule_file: tells schedule text from torch's CSV and reads either.
#include "sim/schedule/schedule_file.h"

#include <cstdio>
#include <string>
#include <string_view>

#include "sim/schedule/generators.h"
#include "sim/schedule/schedule_text.h"
#include "traces/enum_names.h"

namespace meshscope::schedule {

std::optional<ScheduleFileFormat> parse_schedule_file_format(std::string_view s) {
  return traces::parse_enum<ScheduleFileFormat>(kScheduleFileFormatNames, s);
}

ScheduleFileFormat detect_schedule_format(std::string_view path, std::string_view text) {
  if (path.ends_with(".csv")) return ScheduleFileFormat::kTorchCsv;
  if (path.ends_with(".sched")) return ScheduleFileFormat::kText;
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    return letter || c == '#' ? ScheduleFileFormat::kText : ScheduleFileFormat::kTorchCsv;
  }
  return ScheduleFileFormat::kText;  // empty: the text parser says what is missing
}

namespace {

// A file of another kind given as a schedule (a config, a trace) is named as such: read as
// torch's CSV, its first character had been "not a torch action".
// `skipped`: bytes before `text` in the file (a byte-order mark), for the offsets named.
void refuse_other_kinds(const std::string& path, std::string_view text, size_t skipped) {
  static constexpr std::string_view kWhat =
      ": a schedule file is meshscope's schedule text (`meshscope schedules --dump`) or "
      "torch.distributed.pipelining's schedule CSV";
  if (text.starts_with("\x1f\x8b"))
    throw ScheduleParseError(path, 0, 0,
                             "a gzip-compressed file (a trace?), not a schedule" +
                                 std::string(kWhat) +
                                 "; the schedule a torch job's traces ran: `meshscope schedules "
                                 "--from-trace DIR`");
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return;
  if (text[first] == '{' || text[first] == '[')
    throw ScheduleParseError(path, 0, 0,
                             "a JSON file (a config or a trace?), not a schedule" +
                                 std::string(kWhat) + "; a configuration goes to --config");
  // Both forms start with a letter, '#', a digit, '(' or '-' (an idle step); a control byte or a
  // byte past ASCII there is a binary file, which the CSV reader would call a bad action.
  const auto c = static_cast<unsigned char>(text[first]);
  if (c < 0x20 || c >= 0x7f) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02X", c);
    throw ScheduleParseError(path, 0, 0,
                             "not text: byte " + std::to_string(skipped + first) + " is " + hex +
                                 " (a binary file?)" + std::string(kWhat));
  }
}

// A UTF-8 byte-order mark, which some editors put first, is not part of either form.
constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";

}  // namespace

LoadedSchedule load_schedule_file(const std::string& path) {
  const std::string file = read_schedule_file(path);
  std::string_view text = file;
  if (text.starts_with(kByteOrderMark)) text.remove_prefix(kByteOrderMark.size());
  refuse_other_kinds(path, text, file.size() - text.size());
  LoadedSchedule out;
  out.format = detect_schedule_format(path, text);
  if (out.format == ScheduleFileFormat::kText) {
    out.schedule = load(text, path, &out.positions);
    if (parse_family(out.schedule.name) && !is_generated(out.schedule))
      out.schedule.name += "-edited";
  } else {
    TorchCsv csv = parse_torch_csv(text, path);
    out.schedule = std::move(csv.schedule);
    out.torch_format = csv.format;
    out.positions = std::move(csv.positions);
  }
  return out;
}

std::string location_in(const std::string& path, const LoadedSchedule& loaded, int rank, int step) {
  const ScheduleTextPositions& p = loaded.positions;
  if (rank < 0 || static_cast<size_t>(rank) >= p.rank_line.size() || p.rank_line[rank] <= 0)
    return path;
  std::string out = path + ":" + std::to_string(p.rank_line[rank]);
  const std::vector<int>& columns = p.action_column[rank];
  if (step >= 0 && static_cast<size_t>(step) < columns.size() && columns[step] > 0)
    out += ":" + std::to_string(columns[step]);
  return out;
}

}  // namespace meshscope::schedule
