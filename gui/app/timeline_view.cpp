// Timeline view: layout of toolbar, ruler and rows, and the mouse and keyboard handling.
#include "gui/app/timeline_view.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "gui/view/activity.h"
#include "gui/view/find.h"
#include "gui/view/span_info.h"
#include "traces/analysis.h"

namespace meshscope::gui {
namespace {

// ImGui::SameLine() when an item `width` pixels wide still fits on the current line, else a new
// line: a toolbar on a narrow window wraps instead of running past its edge.
void same_line_if_fits(float width) {
  const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  ImGui::SameLine();
  if (ImGui::GetCursorScreenPos().x + width > right) ImGui::NewLine();
}

constexpr size_t kMaxMatches = 1'000'000;
constexpr float kZoomPerWheelNotch = 1.25f;
constexpr float kKeyPanFraction = 0.1f;

// The GLFW backend indexes io.KeysDown by GLFW key codes; a letter's code is its ASCII capital.
bool letter_pressed(char upper) { return ImGui::IsKeyPressed(upper); }

}  // namespace

void TimelineView::reset_for(const Run& run) {
  run_ = &run;
  axis_.set_width_px(std::max(1.0f, ImGui::GetContentRegionAvail().x - kLabelPx));
  axis_.set_bounds(run.begin_ns(), run.end_ns());
  collapsed_ = collapsed_by_default(run.timeline);
  order_ = device_display_order(run.timeline);
  relayout(run);
  selected_.reset();
  matches_.clear();
  marked_.clear();
  scroll_y_ = 0;
}

void TimelineView::relayout(const Run& run) {
  layout_ =
      RowLayout(*run.index, run.timeline.devices.size(), RowLayoutOptions{}, collapsed_, order_);
}

void TimelineView::expand(const Run& run, uint16_t device) {
  if (device < collapsed_.size() && collapsed_[device]) {
    collapsed_[device] = false;
    relayout(run);
  }
}

void TimelineView::jump_to(uint16_t device, int64_t begin_ns, int64_t end_ns) {
  const int64_t margin = std::max<int64_t>((end_ns - begin_ns) / 2, 1);
  axis_.show(begin_ns - margin, end_ns + margin);
  if (device < collapsed_.size()) scroll_to_ = layout_.device_top(device);
}

void TimelineView::draw(Session& session) {
  Run* run = session.primary_run();
  if (!run) {
    ImGui::TextUnformatted(
        "No trace open. Drop a trace file on the window or pass it on the command line.");
    return;
  }
  if (run != run_) reset_for(*run);
  if (session.jump) {
    expand(*run, session.jump->device);
    jump_to(session.jump->device, session.jump->begin_ns, session.jump->end_ns);
    session.jump.reset();
  }
  draw_toolbar(session, *run);

  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ImVec2 cursor = ImGui::GetCursorScreenPos();
  axis_.set_width_px(std::max(1.0f, avail.x - kLabelPx));
  const ImVec2 plot_min(cursor.x + kLabelPx, cursor.y + kRulerPx);
  const ImVec2 plot_size(static_cast<float>(axis_.width_px()), std::max(1.0f, avail.y - kRulerPx));
  ImDrawList* dl = ImGui::GetWindowDrawList();
  draw_ruler(dl, ImVec2(plot_min.x, cursor.y), plot_size.x);

  // One invisible button over the plot takes the mouse so the window does not move.
  ImGui::SetCursorScreenPos(ImVec2(cursor.x, plot_min.y));
  ImGui::InvisibleButton("##plot", ImVec2(avail.x, plot_size.y),
                         ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight);
  handle_input(session, *run, plot_min, plot_size);

  const float max_scroll = std::max(0.0f, layout_.total_px() - plot_size.y);
  if (scroll_to_) scroll_y_ = *scroll_to_;
  scroll_to_.reset();
  scroll_y_ = std::clamp(scroll_y_, 0.0f, max_scroll);
  origin_ = ImVec2(plot_min.x, plot_min.y - scroll_y_);

  PaintTarget target{dl, origin_, kLabelPx, plot_min.y, plot_min.y + plot_size.y};
  PaintOptions options;
  options.flows = flows_;
  // Arrows stay readable while there are fewer than one per ~12 pixels of width.
  options.max_flows = static_cast<size_t>(axis_.width_px() / 12);
  options.marked = marked_.empty() ? nullptr : &marked_;
  options.selected = selected_;
  if (critical_on_) {
    if (critical_for_ != run) {
      critical_ = traces::critical_paths(run->timeline);
      critical_for_ = run;
    }
    options.critical = &critical_;
  }
  if (ImGui::IsItemHovered()) options.mouse = ImGui::GetMousePos();
  dl->PushClipRect(ImVec2(cursor.x, plot_min.y),
                   ImVec2(cursor.x + avail.x, plot_min.y + plot_size.y), true);
  last_paint_ = painter_.paint(target, *run, layout_, axis_, options, &hover_);

  if (session.show_playhead) {
    const float x = screen_x(session.playhead.t_ns());
    dl->AddLine(ImVec2(x, plot_min.y), ImVec2(x, plot_min.y + plot_size.y),
                IM_COL32(255, 255, 255, 220), 2);
  }
  if (select_from_x_ && ImGui::IsMouseDown(ImGuiMouseButton_Right)) {
    const float x0 = plot_min.x + *select_from_x_, x1 = ImGui::GetMousePos().x;
    dl->AddRectFilled(ImVec2(std::min(x0, x1), plot_min.y),
                      ImVec2(std::max(x0, x1), plot_min.y + plot_size.y),
                      IM_COL32(100, 160, 255, 50));
  }
  dl->PopClipRect();

  if (hover_ && hover_->box && ImGui::IsItemHovered() &&
      !ImGui::IsMouseDown(ImGuiMouseButton_Left)) {
    const Box& b = *hover_->box;
    const traces::Timeline& t = run->timeline;
    ImGui::BeginTooltip();
    if (b.folded()) {
      const Row& row = run->index->rows()[*hover_->row];
      ImGui::TextUnformatted(describe_fold(b.count, t.spans[b.span].begin_ns,
                                           t.spans[row.span_at(b.first + b.count - 1)].end_ns)
                                 .c_str());
    } else {
      ImGui::TextUnformatted(describe_span(t, *run->index, b.span, axis_.origin_ns()).c_str());
    }
    ImGui::EndTooltip();
  }
}

void TimelineView::draw_toolbar(Session& session, const Run& run) {
  if (focus_find_) {
    ImGui::SetKeyboardFocusHere();
    focus_find_ = false;
  }
  ImGui::SetNextItemWidth(220);
  if (ImGui::InputTextWithHint("##find", "find: name, mb 3, #3, bubble", find_text_,
                               sizeof find_text_, ImGuiInputTextFlags_EnterReturnsTrue)) {
    if (!matches_.empty() && ImGui::GetIO().KeyShift) {
      match_ = (match_ + matches_.size() - 1) % matches_.size();
      show_match(run);
    } else {
      run_find(run);
    }
    ImGui::SetKeyboardFocusHere(-1);  // keep typing / pressing Enter for the next match
  }
  ImGui::SameLine();
  if (ImGui::ArrowButton("##prev", ImGuiDir_Left) && !matches_.empty()) {
    match_ = (match_ + matches_.size() - 1) % matches_.size();
    show_match(run);
  }
  ImGui::SameLine();
  if (ImGui::ArrowButton("##next", ImGuiDir_Right) && !matches_.empty()) {
    match_ = (match_ + 1) % matches_.size();
    show_match(run);
  }
  ImGui::SameLine();
  if (!matches_.empty()) {
    ImGui::Text("%zu / %zu%s", match_ + 1, matches_.size(), matches_whole_ ? "" : "+");
  } else if (find_text_[0] && !marked_.empty()) {
    ImGui::TextUnformatted("no match");
  } else {
    ImGui::TextDisabled("Enter: next, Shift+Enter: previous");
  }
  // On a narrow window what does not fit goes on the next line rather than past the edge.
  const ImGuiStyle& style = ImGui::GetStyle();
  const float box = ImGui::GetFrameHeight() + style.ItemInnerSpacing.x;
  same_line_if_fits(ImGui::CalcTextSize("Fit").x + 2 * style.FramePadding.x);
  if (ImGui::Button("Fit")) axis_.fit();
  same_line_if_fits(box + ImGui::CalcTextSize("flows").x);
  ImGui::Checkbox("flows", &flows_);
  same_line_if_fits(box + ImGui::CalcTextSize("playhead").x);
  ImGui::Checkbox("playhead", &session.show_playhead);
  same_line_if_fits(box + ImGui::CalcTextSize("critical path").x);
  ImGui::Checkbox("critical path", &critical_on_);
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip(
        "the chain of spans, across lanes and ranks, that decided each step's length "
        "(meshscope analyze --critical-path), outlined in magenta and joined where one released "
        "the next");
  }
  char status[512];
  std::snprintf(status, sizeof status, "| %s  bubble %.1f%%  step %s  |  %zu boxes (%zu folded)%s",
                run.label.c_str(), run.analysis.bubble_fraction * 100,
                traces::format_duration(run.analysis.step_time_ns).c_str(), last_paint_.boxes,
                last_paint_.folded, last_paint_.flows_left_out ? ", flows hidden: zoom in" : "");
  same_line_if_fits(ImGui::CalcTextSize(status).x);
  ImGui::TextDisabled("%s", status);
  // Legend: one swatch per activity that the run contains would need a scan; show them all (host
  // calls and annotations too: in an imported trace they fill most of the view).
  ImDrawList* dl = ImGui::GetWindowDrawList();
  for (size_t a = 0; a < static_cast<size_t>(Activity::kCount); ++a) {
    const auto act = static_cast<Activity>(a);
    const float s = ImGui::GetFontSize();
    const std::string label(name(act));
    if (a > 0) same_line_if_fits(s + 3 + ImGui::CalcTextSize(label.c_str()).x);
    const ImVec2 p = ImGui::GetCursorScreenPos();
    dl->AddRectFilled(p, ImVec2(p.x + s, p.y + s), color_of(act));
    ImGui::Dummy(ImVec2(s, s));
    ImGui::SameLine(0, 3);
    ImGui::TextUnformatted(label.c_str());
  }
}

void TimelineView::draw_ruler(ImDrawList* dl, ImVec2 min, float width) {
  dl->AddRectFilled(min, ImVec2(min.x + width, min.y + kRulerPx), IM_COL32(45, 48, 54, 255));
  const RulerTicks ticks = ruler_ticks(axis_, 90);
  for (double rel : ticks.rel_ns) {
    const float x = min.x + static_cast<float>(axis_.x_of_rel(rel));
    dl->AddLine(ImVec2(x, min.y + kRulerPx - 8), ImVec2(x, min.y + kRulerPx),
                IM_COL32(200, 200, 200, 255));
    dl->AddText(ImVec2(x + 3, min.y + 2), IM_COL32(220, 220, 220, 255),
                format_ruler_label(rel, ticks.step_ns).c_str());
  }
}

void TimelineView::handle_input(Session& session, const Run& run, ImVec2 plot_min,
                                ImVec2 plot_size) {
  ImGuiIO& io = ImGui::GetIO();
  const bool hovered = ImGui::IsItemHovered();
  const float mx = io.MousePos.x - plot_min.x;
  if (hovered && io.MouseWheel != 0) {
    if (io.KeyShift) {
      scroll_y_ -= io.MouseWheel * layout_.options().row_px * 3;
    } else {
      axis_.zoom_at(mx, std::pow(kZoomPerWheelNotch, io.MouseWheel));
    }
  }
  if (ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Left)) {
    axis_.pan_px(io.MouseDelta.x);
    scroll_y_ -= io.MouseDelta.y;
  }
  // Right-drag: zoom to the selected range.
  if (hovered && ImGui::IsMouseClicked(ImGuiMouseButton_Right)) select_from_x_ = mx;
  if (select_from_x_ && ImGui::IsMouseReleased(ImGuiMouseButton_Right)) {
    if (std::abs(mx - *select_from_x_) > 3)
      axis_.show_rel(axis_.rel_of(*select_from_x_), axis_.rel_of(mx));
    select_from_x_.reset();
  }
  // A click (no drag) selects a span or zooms into a folded box; on a header it (un)collapses.
  if (hovered && ImGui::IsMouseReleased(ImGuiMouseButton_Left) &&
      ImGui::GetMouseDragDelta(ImGuiMouseButton_Left, 0).x == 0 && hover_) {
    if (!hover_->row) {
      collapsed_[hover_->device] = !collapsed_[hover_->device];
      relayout(run);
    } else if (hover_->box) {
      const Box& b = *hover_->box;
      const Row& row = run.index->rows()[*hover_->row];
      const auto& t = run.timeline;
      if (b.folded()) {
        axis_.show(t.spans[b.span].begin_ns, t.spans[row.span_at(b.first + b.count - 1)].end_ns);
      } else {
        selected_ = b.span;
      }
    } else {
      selected_.reset();
    }
  }
  if (hovered && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left) && hover_ && hover_->box) {
    const auto& s = run.timeline.spans[hover_->box->span];
    jump_to(s.device, s.begin_ns, s.end_ns);
  }

  if (io.WantTextInput) return;
  if (io.KeyCtrl && letter_pressed('F')) focus_find_ = true;
  const double pan = axis_.width_px() * kKeyPanFraction;
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_LeftArrow)) || letter_pressed('A'))
    axis_.pan_px(pan);
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_RightArrow)) || letter_pressed('D'))
    axis_.pan_px(-pan);
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_UpArrow)) || letter_pressed('W')) {
    axis_.zoom_at(axis_.width_px() / 2, 1.5);
  }
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_DownArrow)) || letter_pressed('S')) {
    axis_.zoom_at(axis_.width_px() / 2, 1 / 1.5);
  }
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Home))) axis_.fit();
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_PageUp))) scroll_y_ -= plot_size.y;
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_PageDown))) scroll_y_ += plot_size.y;
  if (letter_pressed('Z') && selected_) {
    const auto& s = run.timeline.spans[*selected_];
    jump_to(s.device, s.begin_ns, s.end_ns);
  }
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Space))) {
    session.show_playhead = true;
    session.playhead.toggle();
  }
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape))) selected_.reset();
}

void TimelineView::run_find(const Run& run) {
  matches_.clear();
  match_ = 0;
  const FindQuery q = parse_find_query(find_text_);
  marked_.assign(q.empty() ? 0 : run.timeline.spans.size(), false);
  matches_whole_ = find_spans(run.timeline, q, kMaxMatches, matches_);
  for (uint32_t i : matches_) marked_[i] = true;
  if (!matches_.empty()) show_match(run);
}

void TimelineView::show_match(const Run& run) {
  const auto& s = run.timeline.spans[matches_[match_]];
  selected_ = matches_[match_];
  expand(run, s.device);  // a match on a collapsed host device: show its rows
  // Keep the zoom when the span already reads well at it; otherwise zoom to the span.
  const double width_px = static_cast<double>(s.duration_ns()) / axis_.ns_per_px();
  if (width_px >= 8 && width_px <= axis_.width_px() / 2) {
    const double mid = axis_.rel(s.begin_ns) + static_cast<double>(s.duration_ns()) / 2;
    axis_.show_rel(mid - axis_.range_ns() / 2, mid + axis_.range_ns() / 2);
    scroll_to_ = layout_.device_top(s.device);
  } else {
    jump_to(s.device, s.begin_ns, s.end_ns);
  }
}

}  // namespace meshscope::gui
