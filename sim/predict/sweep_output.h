// A sweep's rows as files: the CSV of `meshscope predict --csv` and the throughput chart of
// `--plot`. Beside to_json (simulate.h) rather than in the command, so that every front end
// writes a sweep with the same columns and the same axes.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/predict/fit_alternatives.h"
#include "sim/predict/plot.h"
#include "sim/predict/simulate.h"

namespace meshscope::predict {

// One point of a sweep once simulated, or one candidate of a search: the values of its swept keys
// and its figures, or why it could not be simulated.
struct SweepRow {
  // The swept keys and this point's values (SweepPoint::swept): the same keys, in the same order,
  // in every row of a sweep.
  std::vector<std::pair<std::string, std::string>> swept;
  Summary summary;
  std::string error;  // the point could not be simulated: `summary` holds no figures
  // For a single point that does not fit: the recomputation and ZeRO stages that would.
  std::optional<FitAlternatives> fit;
};

// Whether the schedule is a swept key: its column is then the swept one, in the table and the CSV.
bool sweeps_schedule(const std::vector<SweepRow>& rows);

// The rows as CSV, a header line first: the swept keys, then gpus, mesh, schedule (unless swept),
// step_time_s, tokens_per_s, tflops_per_gpu, mfu, bubble_fraction, peak_memory_bytes, fits, error
// and the ranges' ends (docs/OUTPUT.md). Swept values, meshes and errors are quoted (RFC 4180); a
// row that did not run has its error and no figures.
std::string csv_of(const std::vector<SweepRow>& rows);

// Throughput (tokens/s, with the range as error bars) over the sweep, for render_svg. X axis: GPUs
// when they vary, else the first swept key, its values in order of appearance when they are not
// all numbers (a GPU or schedule sweep); one series per combination of the other swept keys. Rows
// that did not run have no place on it.
Chart chart_of(const std::vector<SweepRow>& rows);

}  // namespace meshscope::predict
