// The text `meshscope predict` prints of a sweep's rows or of --search's candidates: the table,
// the notes under it that its rows call for, and --breakdown's time and memory of each point.
#pragma once

#include <vector>

#include "sim/predict/sweep_output.h"

namespace meshscope::cli {

// A column per swept key, then gpus, mesh, schedule (unless swept), step time, tokens/s,
// TFLOP/s/GPU, MFU, bubble, peak memory and fits, with the development set's range beside the
// figures that have one; a row that did not run prints its error past the columns. Then what the
// figures need said, once for all rows: what the ranges are and where
// they reach past their runs (longer sequences, FP8), samples
// counted as tokens, MFU past 100%, the slowest GPU's rate, and rows that fit tightly or not at
// all (with, for one configuration, the recomputation and ZeRO stages that would fit).
void print_table(const std::vector<predict::SweepRow>& rows);

// --breakdown: for each point that ran, where the step's time goes on the device with the busiest
// compute stream, term by term (breakdown.h), and what holds its fullest device's memory
// (memory.h) against the device's capacity.
void print_breakdowns(const std::vector<predict::SweepRow>& rows);

}  // namespace meshscope::cli
