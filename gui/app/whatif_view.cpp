// What-if view: controls, background re-simulation, predicted-vs-measured and the scaling chart.
#include "gui/app/whatif_view.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "gui/view/activity.h"
#include "sim/cost/hardware.h"
#include "sim/schedule/families.h"
#include "traces/analysis.h"

namespace meshscope::gui {
namespace {

constexpr float kControlsPx = 270;

bool string_combo(const char* label, std::string& value, const std::vector<std::string>& choices,
                  const std::string& fallback = "") {
  bool changed = false;
  if (ImGui::BeginCombo(label, value.empty() ? fallback.c_str() : value.c_str())) {
    for (const std::string& c : choices) {
      if (ImGui::Selectable(c.c_str(), c == value)) {
        value = c;
        changed = true;
      }
    }
    ImGui::EndCombo();
  }
  return changed;
}

bool positive_int(const char* label, int& v, int max) {
  const int before = v;
  ImGui::InputInt(label, &v);
  v = std::clamp(v, 1, max);
  return v != before;
}

}  // namespace

WhatIfView::WhatIfView(std::optional<Predictor> predictor) : predictor_(std::move(predictor)) {
  if (!predictor_) return;
  job_ = std::make_unique<LatestJob<Request, Result>>([p = *predictor_](const Request& r) {
    Result result;
    result.run = make_run(p.simulate(r.config), "predicted: " + describe(r.config));
    result.points = sweep(p, r.config, r.axis);
    if (r.as_run) result.table = replay_table(p, *r.as_run, r.measured_ns);
    result.shown = r.shown;
    return result;
  });
}

void WhatIfView::submit() {
  error_.clear();
  Request r{config_, axis_, std::nullopt, 0, shown_};
  if (table_pending_ && measured_ != nullptr) {
    r.as_run = config_;
    r.measured_ns = measured_->analysis.step_time_ns;
    table_pending_ = false;
  }
  job_->submit(std::move(r));
}

void WhatIfView::draw(Session& session) {
  if (!predictor_) {
    ImGui::TextWrapped(
        "The simulator is not built into this viewer, so there is nothing to predict with.");
    return;
  }
  if (predictor_->hardware.empty()) {
    std::string looked;
    for (const std::string& d : cost::catalog_dirs()) looked += "\n  " + d;
    ImGui::TextWrapped(
        "No hardware catalog found, so there is nothing to predict on: set MESHSCOPE_CATALOG to a "
        "directory of hardware .json files (the source tree's sim/cost/catalog; the framework "
        "profiles are read from the frameworks folder beside it). Looked in:%s",
        looked.c_str());
    return;
  }
  Run* measured = session.primary_run();
  if (measured == nullptr) {
    ImGui::TextWrapped(
        "No trace open. The what-if starts from a shown run's configuration: drop a trace file on "
        "the window or pass it on the command line.");
    return;
  }
  if (measured != measured_) {
    measured_ = measured;
    ++shown_;
    table_.reset();
    calibration_.clear();
    if (measured) {
      // Start calibrated from the shown run, and say from what (or why not); a job replayed
      // from its own traces comes with its replay table.
      WhatIfStart start = start_whatif(*predictor_, measured->timeline, config_);
      config_ = std::move(start.config);
      const Limits fixed;
      most_ = {std::max(fixed.microbatches, config_.microbatches), std::max(fixed.dp, config_.dp),
               std::max(fixed.pp, config_.pp), std::max(fixed.tp, config_.tp),
               std::max(fixed.virtual_stages, config_.virtual_stages)};
      calibration_ = std::move(start.calibration);
      table_ = std::move(start.table);
      // An uncalibrated model's error against the run says nothing of the schedules: no table.
      table_pending_ = !table_ && start.schedule_known && start.calibrated;
    }
    submit();
  }
  if (auto outcome = job_->poll()) {
    if (outcome->value) {
      predicted_ = std::move(outcome->value->run);
      points_ = std::move(outcome->value->points);
      if (outcome->value->table && outcome->value->shown == shown_)
        table_ = std::move(outcome->value->table);
    } else {
      error_ = outcome->error;
    }
  }

  ImGui::BeginChild("##whatif_controls", ImVec2(kControlsPx, 0), true);
  if (draw_controls()) submit();
  ImGui::Separator();
  if (job_->busy()) {
    ImGui::TextUnformatted("simulating...");
  } else if (!error_.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(255, 120, 120, 255));
    ImGui::TextWrapped("%s", error_.c_str());
    ImGui::PopStyleColor();
  }
  if (predicted_) {
    ImGui::Text("predicted step %s",
                traces::format_duration(predicted_->analysis.step_time_ns).c_str());
    ImGui::Text("predicted bubble %.1f%%", predicted_->analysis.bubble_fraction * 100);
    if (measured_) {
      ImGui::Text("measured step %s",
                  traces::format_duration(measured_->analysis.step_time_ns).c_str());
      ImGui::Text("measured bubble %.1f%%", measured_->analysis.bubble_fraction * 100);
    }
    if (ImGui::Button("Keep as a run (for compare)")) {
      session.runs.push_back(std::move(predicted_));
      session.compare_b = session.runs.size() - 1;
      session.compare_a = session.primary;
      session.switch_to = ViewKind::kCompare;
    }
  }
  if (measured_ && !predicted_) {
    ImGui::Text("measured step %s",
                traces::format_duration(measured_->analysis.step_time_ns).c_str());
  }
  if (!calibration_.empty()) ImGui::TextWrapped("%s", calibration_.c_str());
  if (table_) {
    // The schedule that ran, replayed, against the measured step; then the alternatives.
    // Wrapped: the rows of an imported job's replay are longer than the controls are wide.
    const auto line = [](const ReplayRow& r, const char* tag) {
      const std::string stages = r.stages > 0 ? " (" + std::to_string(r.stages) + " stages)" : "";
      if (!r.error.empty()) {
        ImGui::TextWrapped("%s %s%s: %s", tag, r.schedule.c_str(), stages.c_str(), r.error.c_str());
      } else {
        // The figures on a line of their own: wrapped with the name, "(+8.7%)" broke at its '.'.
        ImGui::TextWrapped("%s %s%s", tag, r.schedule.c_str(), stages.c_str());
        ImGui::Text("    %s (%+.1f%%)", traces::format_duration(r.step_ns).c_str(),
                    r.error_percent);
      }
    };
    // An imported job's rows name themselves ("as run (torch)", "as run, mean costs").
    line(table_->as_run, table_->as_run_mean ? "replayed" : "replayed as run:");
    if (table_->as_run_mean) line(*table_->as_run_mean, "  replayed");
    for (const ReplayRow& r : table_->alternatives) line(r, "  instead");
  }
  ImGui::EndChild();
  ImGui::SameLine();

  ImGui::BeginChild("##whatif_main");
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  // A smaller share for the chart on short windows, so the timelines keep their ranks.
  const float chart_h = std::min(240.0f, avail.y * (avail.y < 700 ? 0.28f : 0.35f));
  const ImVec2 min = ImGui::GetCursorScreenPos();
  if (predicted_ && measured_) {
    pair_.draw_pair(*measured_, *predicted_, ("measured: " + measured_->label).c_str(),
                    predicted_->label.c_str(), min, ImVec2(avail.x, avail.y - chart_h - 8));
  } else if (predicted_) {
    pair_.draw_pair(*predicted_, *predicted_, predicted_->label.c_str(), predicted_->label.c_str(),
                    min, ImVec2(avail.x, avail.y - chart_h - 8));
  }
  draw_chart(ImVec2(min.x, min.y + avail.y - chart_h), ImVec2(avail.x, chart_h));
  ImGui::EndChild();
}

bool WhatIfView::draw_controls() {
  bool changed = false;
  ImGui::TextUnformatted("What if ...");
  const std::string model = describe(config_.workload);
  ImGui::TextWrapped("model: %s", model.empty() ? "(the simulator's default)" : model.c_str());
  ImGui::PushItemWidth(150);
  changed |= string_combo("schedule", config_.schedule, predictor_->schedules);
  changed |= positive_int("microbatches", config_.microbatches, most_.microbatches);
  changed |= positive_int("dp", config_.dp, most_.dp);
  changed |= positive_int("pp", config_.pp, most_.pp);
  changed |= positive_int("tp", config_.tp, most_.tp);
  // The chunk count is a choice only for families that take more than one (families.h).
  const std::optional<schedule::Family> family = schedule::parse_family(config_.schedule);
  if (family && schedule::info(*family).max_virtual_stages != 1 &&
      schedule::info(*family).min_virtual_stages != schedule::info(*family).max_virtual_stages)
    changed |= positive_int("virtual stages", config_.virtual_stages, most_.virtual_stages);
  changed |= string_combo("hardware", config_.hardware, predictor_->hardware,
                          predictor_->default_hardware);
  int axis = static_cast<int>(axis_);
  if (ImGui::BeginCombo("scaling", std::string(name(axis_)).c_str())) {
    for (int i = 0; i < static_cast<int>(ScalingAxis::kCount); ++i) {
      if (ImGui::Selectable(std::string(name(static_cast<ScalingAxis>(i))).c_str(), i == axis)) {
        axis_ = static_cast<ScalingAxis>(i);
        changed = true;
      }
    }
    ImGui::EndCombo();
  }
  ImGui::PopItemWidth();
  return changed;
}

void WhatIfView::draw_chart(ImVec2 min, ImVec2 size) const {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(min, ImVec2(min.x + size.x, min.y + size.y), IM_COL32(30, 32, 36, 255));
  std::string title =
      "scaling: step time (blue) and bubble fraction (red) against " + std::string(name(axis_));
  dl->AddText(ImVec2(min.x + 6, min.y + 4), IM_COL32(230, 230, 230, 255), title.c_str());
  std::vector<const ScalingPoint*> ok;
  for (const ScalingPoint& p : points_) {
    if (p.error.empty() && p.step_ns > 0) ok.push_back(&p);
  }
  if (ok.size() < 2) return;
  const float pad = 40, top = min.y + 26, bottom = min.y + size.y - 22;
  const float left = min.x + pad, right = min.x + size.x - pad;
  const double lx0 = std::log2(ok.front()->x), lx1 = std::log2(ok.back()->x);
  int64_t max_step = 0;
  for (const ScalingPoint* p : ok) max_step = std::max(max_step, p->step_ns);
  auto px = [&](int x) {
    return left +
           static_cast<float>((std::log2(x) - lx0) / std::max(lx1 - lx0, 1e-9)) * (right - left);
  };
  auto py = [&](double v) { return bottom - static_cast<float>(v) * (bottom - top); };
  for (size_t i = 0; i < ok.size(); ++i) {
    const ScalingPoint& p = *ok[i];
    const ImVec2 s(px(p.x), py(static_cast<double>(p.step_ns) / static_cast<double>(max_step)));
    const ImVec2 b(px(p.x), py(p.bubble_fraction));
    dl->AddCircleFilled(s, 4, color_of(Activity::kForward));
    dl->AddCircleFilled(b, 4, kBubbleColor);
    if (i > 0) {
      const ScalingPoint& q = *ok[i - 1];
      dl->AddLine(
          ImVec2(px(q.x), py(static_cast<double>(q.step_ns) / static_cast<double>(max_step))), s,
          color_of(Activity::kForward), 2);
      dl->AddLine(ImVec2(px(q.x), py(q.bubble_fraction)), b, kBubbleColor, 2);
    }
    // Labels kept inside the chart: the last point's step time used to run off its right edge.
    const float edge = min.x + size.x - 4;
    const std::string label = std::to_string(p.x);
    const float lw = ImGui::CalcTextSize(label.c_str()).x;
    dl->AddText(ImVec2(std::min(s.x - lw / 2, edge - lw), bottom + 4), IM_COL32(200, 200, 200, 255),
                label.c_str());
    const std::string step = traces::format_duration(p.step_ns);
    const float sw = ImGui::CalcTextSize(step.c_str()).x;
    const float sx = s.x + 5 + sw > edge ? s.x - 5 - sw : s.x + 5;
    dl->AddText(ImVec2(sx, std::max(top, s.y - 14)), IM_COL32(160, 190, 255, 255), step.c_str());
  }
  dl->AddText(ImVec2(min.x + 4, top - 4), IM_COL32(200, 200, 200, 255), "100%");
  dl->AddText(ImVec2(min.x + 4, bottom - 12), IM_COL32(200, 200, 200, 255), "0");
}

}  // namespace meshscope::gui
