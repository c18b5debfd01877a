// Reading a schedule file in either form meshscope takes: its own schedule text or torch's CSV.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "sim/schedule/schedule.h"
#include "sim/schedule/schedule_text.h"
#include "sim/schedule/torch_csv.h"

namespace meshscope::schedule {

enum class ScheduleFileFormat : uint8_t { kText = 0, kTorchCsv = 1, kCount };
inline constexpr std::array<std::string_view, static_cast<size_t>(ScheduleFileFormat::kCount)>
    kScheduleFileFormatNames = {"text", "torch-csv"};
constexpr std::string_view name(ScheduleFileFormat f) {
  return kScheduleFileFormatNames[static_cast<size_t>(f)];
}
std::optional<ScheduleFileFormat> parse_schedule_file_format(std::string_view s);

// How a file is told apart, for --help texts.
inline constexpr std::string_view kScheduleFileHelp =
    "meshscope schedule text or torch.distributed.pipelining's schedule CSV (compute_only, "
    "compute_comms or pipeline_order): a .csv file is read as torch's CSV, a .sched file as text, "
    "any other by its "
    "first character (a letter or '#' starts schedule text)";

// By content alone: schedule text when the first non-blank byte is a letter or '#'.
ScheduleFileFormat detect_schedule_format(std::string_view path, std::string_view text);

struct LoadedSchedule {
  Schedule schedule;
  ScheduleFileFormat format = ScheduleFileFormat::kText;
  TorchCsvFormat torch_format = TorchCsvFormat::kComputeOnly;  // when format is kTorchCsv
  ScheduleTextPositions positions;  // of either form (TorchCsv::positions for torch's CSV)
};

// "FILE:LINE:COLUMN" of rank `rank`'s action `step` in a schedule file, for the validator's
// errors: its line alone for the end of the line (step == its length) or an action no cell of
// torch's CSV holds (a STEP it added); FILE alone when the rank is -1 (the header).
std::string location_in(const std::string& path, const LoadedSchedule& loaded, int rank, int step);

// Throws ScheduleParseError naming the file (line 0 when it cannot be read). Schedule text whose
// `name` is a family's but whose actions are not what that family generates (is_generated: a
// dump edited by hand) is named "<name>-edited": a family's name would have the run described as
// the family's (Timeline::run.family), and calibrate and the viewer's what-if rebuild the family.
LoadedSchedule load_schedule_file(const std::string& path);

}  // namespace meshscope::schedule
