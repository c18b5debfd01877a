// `meshscope predict --from-trace DIR`: the pipeline schedules replayed with the costs a torch
// pipelining job's traces show (predict_from_trace.cpp says which and how).
#pragma once

#include <string>

namespace meshscope::cli {

struct PredictFromTraceArgs {
  std::string trace;     // folder of per-rank traces (or one file)
  std::string schedule;  // empty: every pipeline family; else only this one among alternatives
  int microbatches = 0;  // 0: the run's
  int pp = 0;            // 0: the run's
  bool json = false;
};

void run_predict_from_trace(const PredictFromTraceArgs& args);

}  // namespace meshscope::cli
