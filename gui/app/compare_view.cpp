// Compare view: the shared axis, the two stacked timelines and the difference table.
#include "gui/app/compare_view.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>

#include "gui/app/timeline_view.h"
#include "traces/analysis.h"

namespace meshscope::gui {
namespace {

constexpr float kTitlePx = 18;

std::string signed_duration(int64_t ns) {
  return (ns > 0 ? "+" : ns < 0 ? "-" : "") + traces::format_duration(ns < 0 ? -ns : ns);
}

bool run_combo(const char* label, const Session& session, size_t& index) {
  bool changed = false;
  ImGui::SetNextItemWidth(260);
  if (ImGui::BeginCombo(label, session.runs[index]->label.c_str())) {
    for (size_t i = 0; i < session.runs.size(); ++i) {
      const std::string item = session.runs[i]->label + "##" + std::to_string(i);
      if (ImGui::Selectable(item.c_str(), i == index)) {
        index = i;
        changed = true;
      }
    }
    ImGui::EndCombo();
  }
  return changed;
}

}  // namespace

void CompareView::build_layouts(const RowLayoutOptions& o) {
  // As in the timeline: accelerators first, host-only devices collapsed.
  const Run& a = *a_;
  const Run& b = *b_;
  layout_a_ = RowLayout(*a.index, a.timeline.devices.size(), o, collapsed_by_default(a.timeline),
                        device_display_order(a.timeline));
  layout_b_ = RowLayout(*b.index, b.timeline.devices.size(), o, collapsed_by_default(b.timeline),
                        device_display_order(b.timeline));
}

void CompareView::reset_for(const Run& a, const Run& b) {
  a_ = &a;
  b_ = &b;
  model_ = compare_runs(a.timeline, a.analysis, b.timeline, b.analysis);
  const int64_t b_len = b.end_ns() - b.begin_ns();
  axis_.set_width_px(std::max(1.0f, ImGui::GetContentRegionAvail().x - TimelineView::kLabelPx));
  axis_.set_bounds(a.begin_ns(), std::max(a.end_ns(), a.begin_ns() + b_len));
  compact_ = false;
  build_layouts(RowLayoutOptions{});
  scroll_a_ = scroll_b_ = 0;
}

void CompareView::draw(Session& session) {
  if (session.runs.size() < 2) {
    ImGui::TextWrapped(
        "Compare needs two runs: open a second trace (drop it on the window, pass two files "
        "on the command line, or predict one in the what-if view).");
    return;
  }
  session.compare_a = std::min(session.compare_a, session.runs.size() - 1);
  session.compare_b = std::min(session.compare_b, session.runs.size() - 1);
  run_combo("A (top)", session, session.compare_a);
  ImGui::SameLine();
  run_combo("B (bottom)", session, session.compare_b);
  const Run& a = *session.runs[session.compare_a];
  const Run& b = *session.runs[session.compare_b];
  if (&a != a_ || &b != b_) reset_for(a, b);
  ImGui::Text("step time  A %s   B %s   (B/A %.3f)      bubble  A %.1f%%   B %.1f%%",
              traces::format_duration(model_.step_a_ns).c_str(),
              traces::format_duration(model_.step_b_ns).c_str(), model_.step_ratio(),
              model_.bubble_a * 100, model_.bubble_b * 100);
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float table_h =
      std::min(avail.y * 0.35f, 60.0f + 20.0f * static_cast<float>(model_.devices.size()));
  draw_pair(a, b, a.label.c_str(), b.label.c_str(), ImGui::GetCursorScreenPos(),
            ImVec2(avail.x, avail.y - table_h));
  draw_table(model_);
}

void CompareView::draw_pair(const Run& a, const Run& b, const char* label_a, const char* label_b,
                            ImVec2 min, ImVec2 size) {
  if (&a != a_ || &b != b_) reset_for(a, b);
  axis_.set_width_px(std::max(1.0f, size.x - TimelineView::kLabelPx));
  ImDrawList* dl = ImGui::GetWindowDrawList();
  // The height each run gets: what its rows need when both fit, else shared in proportion to
  // what they need, at least a quarter each, so a short measured run leaves the predicted mesh
  // all its ranks (a fixed half cut the last rank off at 1280x720).
  const float space = size.y - TimelineView::kRulerPx;
  if (!compact_ && layout_a_.total_px() + layout_b_.total_px() + 2 * kTitlePx > space) {
    compact_ = true;  // e.g. the what-if pair at 1280x720: 16-px rows fit a pp=4 prediction
    build_layouts(RowLayoutOptions{.header_px = 16, .row_px = 16, .gap_px = 4});
  }
  const float need_a = layout_a_.total_px() + kTitlePx, need_b = layout_b_.total_px() + kTitlePx;
  float half = space / 2;
  if (need_a + need_b <= space) {
    half = need_a + (space - need_a - need_b) / 2;
  } else {
    half = std::clamp(space * need_a / (need_a + need_b), space / 4, space * 3 / 4);
  }
  const float plot_x = min.x + TimelineView::kLabelPx;

  ImGui::SetCursorScreenPos(min);
  ImGui::InvisibleButton("##pair", size, ImGuiButtonFlags_MouseButtonLeft);
  ImGuiIO& io = ImGui::GetIO();
  const bool hovered = ImGui::IsItemHovered();
  const bool over_b = io.MousePos.y > min.y + TimelineView::kRulerPx + half;
  float& scroll = over_b ? scroll_b_ : scroll_a_;
  if (hovered && io.MouseWheel != 0) {
    if (io.KeyShift) {
      scroll -= io.MouseWheel * 60;
    } else {
      axis_.zoom_at(io.MousePos.x - plot_x, std::pow(1.25f, io.MouseWheel));
    }
  }
  if (ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Left)) {
    axis_.pan_px(io.MouseDelta.x);
    scroll -= io.MouseDelta.y;
  }
  if (hovered && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) axis_.fit();

  // Ruler in offsets from the runs' first steps (a's scale when the runs have their own).
  dl->AddRectFilled(
      ImVec2(plot_x, min.y),
      ImVec2(plot_x + static_cast<float>(axis_.width_px()), min.y + TimelineView::kRulerPx),
      IM_COL32(45, 48, 54, 255));
  const RulerTicks ticks = ruler_ticks(axis_, 90);
  // Each run on its own scale: the ruler's lines are a's alone (a 33.8 ms prediction stretched
  // under a 0.6 s ruler had read as 0.6 s); b's title says its scale.
  const float grid_bottom = shared_axis_ ? min.y + size.y : min.y + TimelineView::kRulerPx + half;
  for (double rel : ticks.rel_ns) {
    const float x = plot_x + static_cast<float>(axis_.x_of_rel(rel));
    dl->AddLine(ImVec2(x, min.y + TimelineView::kRulerPx - 8), ImVec2(x, grid_bottom),
                IM_COL32(200, 200, 200, 40));
    dl->AddText(ImVec2(x + 3, min.y + 2), IM_COL32(220, 220, 220, 255),
                format_ruler_label(rel, ticks.step_ns).c_str());
  }

  ImGui::SetCursorScreenPos(ImVec2(min.x + 4, min.y + 2));
  ImGui::Checkbox("one time scale", &shared_axis_);
  TimeAxis axis_b = axis_.shifted(-model_.b_to_a_shift_ns);
  if (!shared_axis_) {
    // The same fractions of b's run as of a's are in view.
    const double len_a = static_cast<double>(a.end_ns() - a.begin_ns());
    const double len_b = static_cast<double>(std::max<int64_t>(b.end_ns() - b.begin_ns(), 1));
    const double scale = len_b / std::max(len_a, 1.0);
    axis_b.set_bounds(b.begin_ns(), b.end_ns());
    axis_b.show_rel(axis_.begin_rel_ns() * scale, axis_.end_rel_ns() * scale);
  }
  struct Half {
    const Run& run;
    const RowLayout& layout;
    const TimeAxis& axis;
    float& scroll;
    const char* label;
    float top;
  };
  std::string title_b = label_b;
  if (!shared_axis_) {
    title_b +=
        "   (its own time scale: " +
        traces::format_duration(static_cast<int64_t>(axis_b.end_rel_ns() - axis_b.begin_rel_ns())) +
        " across)";
  }
  const Half halves[] = {
      {a, layout_a_, axis_, scroll_a_, label_a, min.y + TimelineView::kRulerPx},
      {b, layout_b_, axis_b, scroll_b_, title_b.c_str(), min.y + TimelineView::kRulerPx + half}};
  rows_fit_ = true;
  for (const Half& h : halves) {
    const float rows_h = (&h == &halves[0] ? half : space - half) - kTitlePx;
    rows_fit_ = rows_fit_ && h.layout.total_px() <= rows_h;
    h.scroll = std::clamp(h.scroll, 0.0f, std::max(0.0f, h.layout.total_px() - rows_h));
    dl->AddRectFilled(ImVec2(min.x, h.top), ImVec2(min.x + size.x, h.top + kTitlePx),
                      IM_COL32(60, 64, 90, 255));
    // Rows past the run's share of the height: said in its title bar, with how to reach them. The
    // gap after the last device is no row: with only it out of view, every rank showed and the
    // bar still said "more rows below". The hint shortens, and the title is cut before it, where
    // both do not fit (at 800 px the hint had been printed over the title).
    const float content_px = h.layout.total_px() - h.layout.options().gap_px;
    float title_end = min.x + size.x - 4;
    if (const float hidden = content_px - rows_h - h.scroll; hidden > 0 || h.scroll > 0) {
      const char* more = hidden > 0 && h.scroll > 0 ? "rows above and below: drag or Shift+wheel"
                         : hidden > 0               ? "more rows below: drag or Shift+wheel"
                                                    : "rows above: drag or Shift+wheel";
      const float title_w = ImGui::CalcTextSize(h.label).x;
      if (title_w + ImGui::CalcTextSize(more).x + 20 > size.x) more = "more rows: drag";
      const float w = ImGui::CalcTextSize(more).x;
      dl->AddText(ImVec2(min.x + size.x - w - 6, h.top + 2), IM_COL32(240, 200, 90, 255), more);
      title_end = min.x + size.x - w - 14;
    }
    const ImVec4 title_clip(min.x, h.top, title_end, h.top + kTitlePx);
    dl->AddText(nullptr, 0, ImVec2(min.x + 4, h.top + 2), IM_COL32(255, 255, 255, 255), h.label,
                nullptr, 0, &title_clip);
    const float rows_top = h.top + kTitlePx;
    dl->PushClipRect(ImVec2(min.x, rows_top), ImVec2(min.x + size.x, rows_top + rows_h), true);
    PaintTarget target{dl, ImVec2(plot_x, rows_top - h.scroll), TimelineView::kLabelPx, rows_top,
                       rows_top + rows_h};
    PaintOptions options;
    options.max_flows = static_cast<size_t>(h.axis.width_px() / 12);  // as the timeline view
    painter_.paint(target, h.run, h.layout, h.axis, options);
    dl->PopClipRect();
  }
  ImGui::SetCursorScreenPos(ImVec2(min.x, min.y + size.y));
}

void CompareView::draw_table(const CompareModel& m) {
  if (!ImGui::BeginTable(
          "##diff", 8,
          ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_BordersInnerV)) {
    return;
  }
  for (const char* h : {"rank", "device", "busy A/step", "busy B/step", "busy B-A", "idle A/step",
                        "idle B/step", "bubble A -> B"}) {
    ImGui::TableSetupColumn(h);
  }
  ImGui::TableHeadersRow();
  for (const DeviceDiff& d : m.devices) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::Text("%d", d.rank);
    ImGui::TableNextColumn();
    // Two names where the runs name the place differently (rank 1 of a pp 2 run, rank 8 of a
    // pp 8 x tp 8 one).
    if (d.in_both() && d.name_b != d.name)
      ImGui::Text("%s | B: %s", d.name.c_str(), d.name_b.c_str());
    else
      ImGui::TextUnformatted(d.name.c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(d.device_a ? traces::format_duration(d.busy_a_ns).c_str() : "-");
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(d.device_b ? traces::format_duration(d.busy_b_ns).c_str() : "-");
    ImGui::TableNextColumn();
    const std::optional<int64_t> delta = d.busy_delta_ns();
    ImGui::TextUnformatted(delta ? signed_duration(*delta).c_str() : "-");
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(d.device_a ? traces::format_duration(d.idle_a_ns).c_str() : "-");
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(d.device_b ? traces::format_duration(d.idle_b_ns).c_str() : "-");
    ImGui::TableNextColumn();
    const auto percent = [](bool has, double f) {
      char text[16];
      std::snprintf(text, sizeof text, "%.1f%%", f * 100);
      return has ? std::string(text) : std::string("-");
    };
    ImGui::Text("%s -> %s", percent(d.device_a.has_value(), d.bubble_a).c_str(),
                percent(d.device_b.has_value(), d.bubble_b).c_str());
  }
  ImGui::EndTable();
}

}  // namespace meshscope::gui
