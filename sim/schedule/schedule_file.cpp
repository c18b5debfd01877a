// load_schedule_file: tells schedule text from torch's CSV and reads either.
#include "sim/schedule/schedule_file.h"

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

LoadedSchedule load_schedule_file(const std::string& path) {
  const std::string text = read_schedule_file(path);
  LoadedSchedule out;
  out.format = detect_schedule_format(path, text);
  if (out.format == ScheduleFileFormat::kText) {
    out.schedule = load(text, path);
  } else {
    TorchCsv csv = parse_torch_csv(text, path);
    out.schedule = std::move(csv.schedule);
    out.torch_format = csv.format;
  }
  return out;
}

}  // namespace meshscope::schedule
