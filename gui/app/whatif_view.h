// The what-if view: edit the schedule, microbatches, dp/pp/tp and hardware of the shown run,
// re-simulate in a background thread, and see the predicted timeline under the measured one and
// a scaling chart (step time and bubble fraction against microbatches, pp or dp).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gui/app/compare_view.h"
#include "gui/app/session.h"
#include "gui/view/latest_job.h"
#include "gui/view/whatif.h"

namespace meshscope::gui {

class WhatIfView {
 public:
  // Without a predictor the view says how to get one instead of offering controls.
  explicit WhatIfView(std::optional<Predictor> predictor);

  void draw(Session& session);
  // True while a simulation is queued or running (--screenshot waits for it).
  bool busy() const { return job_ && job_->busy(); }
  // The configuration the controls hold (the shown run's until edited).
  const WhatIfConfig& config() const { return config_; }

 private:
  struct Request {
    WhatIfConfig config;
    ScalingAxis axis = ScalingAxis::kMicrobatches;
    // Set when the shown run changed: replay its own configuration and the alternatives.
    std::optional<WhatIfConfig> as_run;
    int64_t measured_ns = 0;
    uint64_t shown = 0;  // shown_ when submitted
  };
  struct Result {
    std::unique_ptr<Run> run;
    std::vector<ScalingPoint> points;
    std::optional<ReplayTable> table;
    uint64_t shown = 0;  // the request's: a table for a run no longer shown is dropped
  };

  bool draw_controls();
  void draw_chart(ImVec2 min, ImVec2 size) const;
  void submit();

  std::optional<Predictor> predictor_;
  std::unique_ptr<LatestJob<Request, Result>> job_;
  const Run* measured_ = nullptr;
  WhatIfConfig config_;
  // The largest each field takes: its limit (assumption: past these a prediction in the window
  // takes seconds), or the run's own where that is larger (a run of 8,192 microbatches or dp
  // 128 was clamped to 1,024 and 64 and predicted so without a word).
  struct Limits {
    int microbatches = 1024, dp = 64, pp = 64, tp = 64, virtual_stages = 16;
  };
  Limits most_;
  ScalingAxis axis_ = ScalingAxis::kMicrobatches;
  std::unique_ptr<Run> predicted_;
  std::vector<ScalingPoint> points_;
  std::string error_;
  std::string calibration_;  // what the predictor was calibrated from, or why not
  std::optional<ReplayTable> table_;
  bool table_pending_ = false;  // the next submit carries the run's own configuration
  uint64_t shown_ = 0;          // counts the shown run's changes
  CompareView pair_{false};
};

}  // namespace meshscope::gui
