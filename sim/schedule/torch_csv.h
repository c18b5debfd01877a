// torch.distributed.pipelining's schedule CSV (`_dump_csv` / `_load_csv` in
// torch/distributed/pipelining/schedules.py, torch 2.15) read into and written from a Schedule.
//
// The format: one row per pp rank, one cell per action, written by Python's csv.writer (cells
// joined by ',', every row ended by "\r\n"). Cells are torch's _Action tokens: "0F0", "1B3",
// "2I1", "2W1"; "0SEND_F0", "2RECV_B1"; "0UNSHARD", "0RESHARD", "0REDUCE_GRAD",
// "0WAIT_REDUCE_GRAD", "0WAIT_SEND_F3"; "(0F3;3B1)OVERLAP_F_B"; an empty cell is torch's None
// (an idle step). Two variants:
// - compute_only: compute cells (F, B, I, W, OVERLAP_F_B) and empty cells only. Reading lowers it
//   with meshscope's transfers and steps (lowering.h); writing keeps compute and idle cells.
// - compute_comms: what torch's runtime runs (its own lowering: SEND/RECV, UNSHARD/RESHARD,
//   REDUCE_GRAD and the waits); no empty cells. Reading keeps every cell in order (the markers of
//   marker.h where meshscope has no action) and adds STEP after each stage's last gradient work.
// - pipeline_order: what _get_pipeline_order() gives for the single-stage schedules (GPipe,
//   1F1B, which have no _dump_csv): compute_only with each row ended by REDUCE_GRAD and
//   WAIT_REDUCE_GRAD and no transfer. Read and written as compute_only, the two kept as markers.
// A schedule read from either writes back byte for byte in the same variant. Stage s lives on
// the row whose actions name it (torch infers the placement the same way); the mesh is dp=1,
// pp=rows, tp=1; microbatches = the largest microbatch + 1.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sim/schedule/schedule.h"
#include "sim/schedule/schedule_text.h"

namespace meshscope::schedule {

enum class TorchCsvFormat : uint8_t {
  kComputeOnly = 0,
  kComputeComms = 1,
  kPipelineOrder = 2,
  kCount
};
inline constexpr std::array<std::string_view, static_cast<size_t>(TorchCsvFormat::kCount)>
    kTorchCsvFormatNames = {"compute_only", "compute_comms", "pipeline_order"};
constexpr std::string_view name(TorchCsvFormat f) {
  return kTorchCsvFormatNames[static_cast<size_t>(f)];
}
std::optional<TorchCsvFormat> parse_torch_csv_format(std::string_view s);

struct TorchCsv {
  Schedule schedule;
  TorchCsvFormat format = TorchCsvFormat::kComputeOnly;  // the variant the text was in
  // Where each rank's actions came from, for the validator's errors (schedule_file.h's
  // location_in): rank r is line r + 1; each action has its cell's column, a transfer meshscope's
  // lowering added the column of the compute cell it was lowered for, and a STEP after the row's
  // cells 0 (the line alone).
  ScheduleTextPositions positions;
};

// Throws ScheduleParseError (schedule_text.h): "x.csv:2:17: unknown action 'FOO' in '3FOO2'";
// line and column are 1-based (the column is the cell's first byte). With `check_send_waits`, a
// compute_comms file with WAIT_SEND cells is refused as torch 2.15's _load_csv refuses it: each
// row's every send retired by one WAIT_SEND after it (a file without any, as torch before
// WAIT_SEND wrote, is read as it stands). Off for the orders of a trace, which can end mid-step.
TorchCsv parse_torch_csv(std::string_view text, std::string_view source_name = "<torch csv>",
                         bool check_send_waits = true);

// torch 2.15's Schedule1F1B.pipeline_order numbers the last rank's forwards 1..n where its runtime
// runs 0..n-1 (tests/fixtures/torch_orders/1f1b_*): for a schedule whose rank runs one stage's
// forwards numbered 1..n and its backwards 0..n-1, what to tell the user beside the validator's
// error ("rank 1's forwards are numbered 1..4 and its backwards 0..3: ..."); empty otherwise.
std::string torch_forward_numbering_hint(const Schedule& schedule);
// The validator's error message, with that hint after it where there is one: what `validate`,
// `run` and `simulate` say of a schedule file that does not validate.
std::string invalid_schedule_message(const Schedule& schedule, const std::string& error_message);

// Throws std::invalid_argument for a schedule torch's CSV cannot hold: a mesh with dp or tp > 1
// (the CSV is one pipeline), collectives other than the dp all-reduce before STEP.
std::string write_torch_csv(const Schedule& schedule, TorchCsvFormat format);

}  // namespace meshscope::schedule
