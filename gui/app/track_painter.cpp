// Row painting: the hot loop of every frame, so it touches only what is visible.
#include "gui/app/track_painter.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "gui/view/activity.h"
#include "gui/view/lane_label.h"
#include "gui/view/span_info.h"
#include "traces/analysis_critical_path.h"

namespace meshscope::gui {
namespace {

constexpr ImU32 kHeaderBg = IM_COL32(38, 41, 46, 255);
constexpr ImU32 kRowBg = IM_COL32(28, 30, 34, 255);
constexpr ImU32 kText = IM_COL32(230, 230, 230, 255);
constexpr ImU32 kDarkText = IM_COL32(20, 20, 20, 255);
constexpr ImU32 kMarked = IM_COL32(255, 235, 59, 255);
constexpr ImU32 kSelected = IM_COL32(255, 255, 255, 255);
constexpr ImU32 kFlow = IM_COL32(236, 239, 241, 170);
// Idle spans inside a folded box: the bubble red, dimmed so it never reads as a whole bubble.
constexpr ImU32 kFoldedIdle = IM_COL32(120, 40, 40, 255);
// Labels are only tried on boxes at least this wide: cheaper than measuring every box's text.
constexpr float kMinLabelPx = 14;
constexpr float kLaneIndentPx = 12;  // lane labels sit indented under their device's header

bool light(ImU32 c) {
  const int r = c & 0xff, g = (c >> 8) & 0xff, b = (c >> 16) & 0xff;
  return r * 299 + g * 587 + b * 114 > 150'000;
}

}  // namespace

ImU32 darker(ImU32 c, float factor) {
  const auto scale = [&](int shift) {
    return static_cast<ImU32>(((c >> shift) & 0xff) * factor) << shift;
  };
  return scale(0) | scale(8) | scale(16) | (c & 0xff000000u);
}

PaintStats TrackPainter::paint(const PaintTarget& target, const Run& run, const RowLayout& layout,
                               const TimeAxis& axis, const PaintOptions& options,
                               std::optional<PaintHover>* hover) {
  PaintStats stats;
  ImDrawList* dl = target.draw_list;
  const traces::Timeline& t = run.timeline;
  const float y0 = target.clip_top - target.origin.y;
  const float y1 = target.clip_bottom - target.origin.y;
  const float left = target.origin.x - target.label_px;
  const float right = target.origin.x + static_cast<float>(axis.width_px());
  const auto& opt = layout.options();

  // Device headers: a band with the device's name across the label column and the plot.
  for (uint16_t d = 0; d < t.devices.size(); ++d) {
    const float top = layout.device_top(d);
    if (top + opt.header_px < y0 || top > y1) continue;
    const float sy = target.origin.y + top;
    dl->AddRectFilled(ImVec2(left, sy), ImVec2(right, sy + opt.header_px), kHeaderBg);
    const auto rows = run.index->device_rows(d);
    const size_t first_row = run.index->device_row_begin(d);
    std::string header = t.devices[d].name;
    if (!rows.empty() && !layout.row_shown(first_row)) {
      header = "[+] " + header + "   (" + std::to_string(rows.size()) +
               (rows.size() == 1 ? " row" : " rows") + " hidden: click to expand)";
    } else if (!rows.empty()) {
      header = "[-] " + header;
    }
    dl->AddText(ImVec2(left + 4, sy + 2), kText, header.c_str());
  }

  if (hover) hover->reset();
  std::optional<float> mouse_y;
  if (options.mouse) mouse_y = options.mouse->y - target.origin.y;
  if (mouse_y && options.mouse->x >= left && options.mouse->x < right) {
    if (auto hit = layout.hit(*mouse_y); hit && hover)
      *hover = PaintHover{hit->device, hit->row, std::nullopt};
  }

  const auto [first, last] = layout.rows_between(y0, y1);
  for (size_t pos = first; pos < last; ++pos) {
    const size_t r = layout.row_at(pos);
    if (!layout.row_shown(r)) continue;
    const float y = target.origin.y + layout.row_top(r);
    const bool hovered_row = hover && *hover && (*hover)->row == r;
    const size_t before = boxes_.size();
    paint_row(target, run, r, y, layout, axis, options, stats);
    if (hovered_row) {
      hover_boxes_.assign(boxes_.begin() + static_cast<std::ptrdiff_t>(before), boxes_.end());
      const int b = hit_box(hover_boxes_, options.mouse->x - target.origin.x, 3.0f);
      if (b >= 0) (*hover)->box = hover_boxes_[static_cast<size_t>(b)];
    }
    boxes_.clear();
  }
  if (options.flows) paint_flows(target, run, layout, axis, options, stats);
  if (options.critical) paint_critical(target, run, layout, axis, *options.critical);
  return stats;
}

void TrackPainter::paint_row(const PaintTarget& target, const Run& run, size_t r, float y,
                             const RowLayout& layout, const TimeAxis& axis,
                             const PaintOptions& options, PaintStats& stats) {
  ImDrawList* dl = target.draw_list;
  const traces::Timeline& t = run.timeline;
  const Row& row = run.index->rows()[r];
  const float h = layout.options().row_px;
  const float ox = target.origin.x;
  const float left = ox - target.label_px;
  dl->AddRectFilled(ImVec2(left, y), ImVec2(ox + static_cast<float>(axis.width_px()), y + h),
                    kRowBg);
  const auto& lanes = t.devices[row.device].lanes;
  if (row.lane < lanes.size()) {
    // Shortened to fit the column (never running under the plot, where the boxes and their
    // counts are); the full name in a tooltip when it was shortened.
    const float x = left + 4 + kLaneIndentPx;
    // The lane's bands are consecutive rows, depths in order: its last one is the deepest.
    const auto& rows = run.index->rows();
    size_t last = r;
    while (last + 1 < rows.size() && rows[last + 1].device == row.device &&
           rows[last + 1].lane == row.lane)
      ++last;
    const std::string label = fit_lane_label(
        lanes[row.lane].name, row.depth, ox - x - 4,
        [](std::string_view text) {
          return ImGui::CalcTextSize(text.data(), text.data() + text.size()).x;
        },
        rows[last].depth);
    const ImVec4 label_clip(left, y, ox - 2, y + h);
    dl->AddText(nullptr, 0, ImVec2(x, y + (h - ImGui::GetFontSize()) / 2),
                IM_COL32(170, 170, 170, 255), label.c_str(), nullptr, 0, &label_clip);
    if (options.mouse && options.mouse->x >= left && options.mouse->x < ox &&
        options.mouse->y >= y && options.mouse->y < y + h) {
      ImGui::SetTooltip(
          "%s%s", lanes[row.lane].name.c_str(),
          row.depth > 0 ? (" +" + std::to_string(row.depth) + " (nesting level)").c_str() : "");
    }
  }
  ++stats.rows;

  const size_t start = boxes_.size();
  build_boxes(t, row, axis, options.lod, boxes_);
  const float top = y + 2, bottom = y + h - 2;
  const ImVec4 clip(ox, y, ox + static_cast<float>(axis.width_px()), y + h);
  dl->PushClipRect(ImVec2(clip.x, clip.y), ImVec2(clip.z, clip.w), true);
  for (size_t i = start; i < boxes_.size(); ++i) {
    const Box& b = boxes_[i];
    const float x0 = ox + b.x0;
    const float x1 = ox + std::max(b.x1, b.x0 + 1.0f);
    const traces::Span& s = t.spans[b.span];
    ++stats.boxes;
    if (b.folded()) {
      ++stats.folded;
      // Not one grey bar (a 76%-idle row would look busy): per 2-pixel column, grey up from the
      // bottom as high as the share of the column that is busy, the idle spans' share as a dim
      // red from the top, gaps left as background.
      const int64_t t0 = axis.t_of(b.x0), t1 = axis.t_of(std::max(b.x1, b.x0 + 1.0f));
      const auto columns = static_cast<size_t>(std::max(1.0f, std::round((x1 - x0) / 2)));
      shares_.clear();
      coverage_columns(t, row, t0, t1, columns, shares_);
      const float cw = (x1 - x0) / static_cast<float>(shares_.size());
      for (size_t c = 0; c < shares_.size(); ++c) {
        const float cx0 = x0 + cw * static_cast<float>(c), cx1 = cx0 + cw;
        const float hb = (bottom - top) * std::clamp(shares_[c].busy, 0.0f, 1.0f);
        const float hi = (bottom - top) * std::clamp(shares_[c].idle, 0.0f, 1.0f);
        if (hi >= 0.5f) dl->AddRectFilled(ImVec2(cx0, top), ImVec2(cx1, top + hi), kFoldedIdle);
        if (shares_[c].busy > 0) {
          dl->AddRectFilled(ImVec2(cx0, std::min(bottom - 1, bottom - hb)), ImVec2(cx1, bottom),
                            kFoldedColor);
        }
      }
      if (x1 - x0 >= kMinLabelPx * 2) {
        const std::string n = std::to_string(b.count);
        if (ImGui::CalcTextSize(n.c_str()).x + 4 < x1 - x0) {
          dl->AddText(nullptr, 0, ImVec2(x0 + 2, top + 1), kText, n.c_str(), nullptr, 0, &clip);
        }
      }
      continue;
    }
    const Activity a = activity_of(s);
    const ImU32 fill = color_of(a);
    dl->AddRectFilled(ImVec2(x0, top), ImVec2(x1, bottom), fill);
    if (a == Activity::kIdle && x1 - x0 >= 3) {
      // A bubble: the red box outlined in a darker red so neighbouring gaps stay apart.
      dl->AddRect(ImVec2(x0, top), ImVec2(x1, bottom), darker(fill, 0.55f));
    }
    if (options.marked && b.span < options.marked->size() && (*options.marked)[b.span]) {
      dl->AddRect(ImVec2(x0 - 1, top - 1), ImVec2(x1 + 1, bottom + 1), kMarked, 0, 0, 2);
    }
    if (options.selected == b.span) {
      dl->AddRect(ImVec2(x0 - 1, top - 1), ImVec2(x1 + 1, bottom + 1), kSelected, 0, 0, 2);
    }
    if (x1 - x0 < kMinLabelPx) continue;
    // Label: the full name if it fits, else the short one, clipped to the visible part.
    const float vis0 = std::max(x0, ox), vis1 = std::min(x1, clip.z);
    for (const std::string& label : {long_label(t, s), short_label(t, s)}) {
      const float w = ImGui::CalcTextSize(label.c_str()).x;
      if (w + 4 > vis1 - vis0) continue;
      const float tx = std::max(vis0 + 2, std::min((vis0 + vis1 - w) / 2, vis1 - w - 2));
      dl->AddText(nullptr, 0, ImVec2(tx, top + (bottom - top - ImGui::GetFontSize()) / 2),
                  light(fill) ? kDarkText : kText, label.c_str(), nullptr, 0, &clip);
      break;
    }
  }
  dl->PopClipRect();
}

void TrackPainter::paint_critical(const PaintTarget& target, const Run& run,
                                  const RowLayout& layout, const TimeAxis& axis,
                                  const std::vector<traces::CriticalPath>& paths) {
  ImDrawList* dl = target.draw_list;
  const float ox = target.origin.x;
  const float w = static_cast<float>(axis.width_px());
  dl->PushClipRect(ImVec2(ox, target.clip_top), ImVec2(ox + w, target.clip_bottom), true);
  const float h = layout.options().row_px;
  auto x_at = [&](int64_t ns) {
    return ox + static_cast<float>(std::clamp(axis.x_of(ns), -10.0, axis.width_px() + 10.0));
  };
  // A span's row, or for one inside a folded device the foot of that device's header: the path
  // runs along it there, below the device's name.
  auto path_y = [&](uint32_t span) {
    const size_t r = run.index->row_of(span);
    return target.origin.y + layout.row_top(r) +
           (layout.row_shown(r) ? h / 2 : layout.options().header_px - 2);
  };
  const int64_t view0 = axis.begin_ns(), view1 = axis.end_ns();
  for (const traces::CriticalPath& p : paths) {
    // Each step's part on the path (a recv posted long before its send is on it only from the
    // send's end on), joined from the release of the step before.
    const std::vector<traces::Interval> on_path = traces::charged_intervals(p);
    for (size_t i = 0; i < p.steps.size(); ++i) {
      const uint32_t span = p.steps[i].span;
      const traces::Interval part = on_path[i];
      const size_t r = run.index->row_of(span);
      if (part.end_ns >= view0 && part.begin_ns <= view1) {
        const float x0 = x_at(part.begin_ns), x1 = std::max(x_at(part.end_ns), x0 + 2);
        if (layout.row_shown(r)) {
          const float y = target.origin.y + layout.row_top(r);
          dl->AddRect(ImVec2(x0, y + 1), ImVec2(x1, y + h - 1), kCriticalColor, 0, 0, 2);
        } else {
          dl->AddLine(ImVec2(x0, path_y(span)), ImVec2(x1, path_y(span)), kCriticalColor, 3.0f);
        }
      }
      if (i == 0) continue;
      const int64_t release = on_path[i - 1].end_ns;
      if (std::max(release, part.begin_ns) < view0 || std::min(release, part.begin_ns) > view1)
        continue;
      dl->AddLine(ImVec2(x_at(release), path_y(p.steps[i - 1].span)),
                  ImVec2(x_at(part.begin_ns), path_y(span)), kCriticalColor, 2.0f);
    }
  }
  dl->PopClipRect();
}

void TrackPainter::paint_flows(const PaintTarget& target, const Run& run, const RowLayout& layout,
                               const TimeAxis& axis, const PaintOptions& options,
                               PaintStats& stats) {
  const traces::Timeline& t = run.timeline;
  flows_.clear();
  if (!run.index->visible_flows(axis.begin_ns(), axis.end_ns(), options.max_flows, flows_)) {
    stats.flows_left_out = true;
    return;  // too many to read: arrows would only hide the spans
  }
  ImDrawList* dl = target.draw_list;
  const float ox = target.origin.x;
  dl->PushClipRect(ImVec2(ox, target.clip_top),
                   ImVec2(ox + static_cast<float>(axis.width_px()), target.clip_bottom), true);
  const float h = layout.options().row_px;
  auto row_mid = [&](uint32_t span) {
    const size_t r = run.index->row_of(span);
    return target.origin.y + layout.row_top(r) +
           (layout.row_shown(r) ? h / 2 : layout.options().header_px / 2);
  };
  for (uint32_t f : flows_) {
    const traces::Flow& flow = t.flows[f];
    // From the send's start to the recv's end: always forward in time, whatever the overlap.
    const ImVec2 a(ox + static_cast<float>(axis.x_of(t.spans[flow.from].begin_ns)),
                   row_mid(flow.from));
    const ImVec2 b(ox + static_cast<float>(axis.x_of(t.spans[flow.to].end_ns)), row_mid(flow.to));
    if (std::max(a.y, b.y) < target.clip_top || std::min(a.y, b.y) > target.clip_bottom) continue;
    dl->AddLine(a, b, kFlow, 1.2f);
    const float dy = b.y > a.y ? -6.0f : 6.0f;
    dl->AddTriangleFilled(b, ImVec2(b.x - 3, b.y + dy), ImVec2(b.x + 3, b.y + dy), kFlow);
    ++stats.flows;
  }
  dl->PopClipRect();
}

}  // namespace meshscope::gui
