// Mesh replay: playhead controls, the dp x pp x tp grid of cells, and a step strip to scrub.
#include "gui/app/mesh_view.h"

#include <algorithm>
#include <cfloat>
#include <string>

#include "gui/app/track_painter.h"
#include "gui/view/activity.h"
#include "gui/view/mesh_layout.h"
#include "gui/view/span_info.h"
#include "traces/analysis.h"

namespace meshscope::gui {
namespace {

constexpr float kStripPx = 46;
constexpr ImU32 kText = IM_COL32(240, 240, 240, 255);
constexpr ImU32 kDarkText = IM_COL32(20, 20, 20, 255);

std::string span_words(const traces::Timeline& t, const traces::Span& s) {
  std::string out(name(activity_of(s)));
  if (s.microbatch >= 0) out += " mb" + std::to_string(s.microbatch);
  if (s.stage >= 0) out += " s" + std::to_string(s.stage);
  (void)t;
  return out;
}

std::string headline_of(const traces::Timeline& t, const DeviceState& state) {
  if (state.compute) return short_label(t, t.spans[*state.compute]);
  if (state.comm) return short_label(t, t.spans[*state.comm]);
  return "bubble";
}

}  // namespace

std::string cell_text(const traces::Timeline& t, const DeviceState& state) {
  // Between the ops of an action: idle to the analysis, which the cell says, and where.
  if (state.idle())
    return state.action
               ? "bubble, between the ops of\n" + std::string(t.span_name(t.spans[*state.action]))
               : "bubble";
  std::string text;
  if (state.compute) text = span_words(t, t.spans[*state.compute]);
  if (state.comm) {
    const traces::Span& c = t.spans[*state.comm];
    if (!text.empty()) text += "\n";
    text += span_words(t, c);
    if (state.peer_device) {
      text += (c.kind == traces::SpanKind::kRecv ? " <- " : " -> ") +
              t.devices[*state.peer_device].name;
    }
  }
  return text;
}

std::string replicas_note(const traces::RunDescriptor& run, int64_t shown_cells) {
  const traces::MeshExtent& m = run.mesh;
  if (!run.replicas_simulated_once || !m.known() || m.size() <= shown_cells) return "";
  return "the run's mesh is dp=" + std::to_string(m.dp) + " x pp=" + std::to_string(m.pp) +
         " x tp=" + std::to_string(m.tp) +
         ": replicas simulated once: devices stand for their dp x tp replicas";
}

void MeshView::draw(Session& session) {
  Run* run = session.primary_run();
  if (!run) {
    ImGui::TextUnformatted("No trace open.");
    return;
  }
  if (run != run_) {
    run_ = run;
    step_ = 0;
  }
  draw_controls(session, *run);
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ImVec2 min = ImGui::GetCursorScreenPos();
  draw_strip(session, *run, min, ImVec2(avail.x, kStripPx));
  ImGui::Dummy(ImVec2(avail.x, kStripPx + 8));
  const ImVec2 cells_min = ImGui::GetCursorScreenPos();
  const ImVec2 cells_size(avail.x, std::max(40.0f, avail.y - kStripPx - 8));
  draw_cells(session, *run, cells_min, cells_size);
  ImGui::Dummy(cells_size);
}

void MeshView::draw_controls(Session& session, const Run& run) {
  Playhead& p = session.playhead;
  const auto& windows = run.analysis.windows;
  if (windows.size() > 1) {
    ImGui::SetNextItemWidth(140);
    if (ImGui::SliderInt("step", &step_, 0, static_cast<int>(windows.size()) - 1)) {
      p.set_range(windows[static_cast<size_t>(step_)].begin_ns,
                  windows[static_cast<size_t>(step_)].end_ns);
    }
    ImGui::SameLine();
  }
  if (ImGui::Button(p.playing() ? "Pause" : "Play")) {
    p.toggle();
    session.show_playhead = true;
  }
  ImGui::SameLine();
  float seconds = static_cast<float>(p.duration_s());
  ImGui::SetNextItemWidth(160);
  if (ImGui::SliderFloat("s per step", &seconds, 1, 120, "%.0f s", ImGuiSliderFlags_Logarithmic)) {
    p.set_duration_s(seconds);
  }
  ImGui::SameLine();
  bool loop = p.loop();
  if (ImGui::Checkbox("loop", &loop)) p.set_loop(loop);
  ImGui::SameLine();
  float fraction = static_cast<float>(p.fraction());
  ImGui::SetNextItemWidth(std::max(100.0f, ImGui::GetContentRegionAvail().x - 260));
  if (ImGui::SliderFloat("##scrub", &fraction, 0, 1, "")) p.seek_fraction(fraction);
  ImGui::SameLine();
  ImGui::Text("t = %s of %s", traces::format_duration(p.t_ns() - p.begin_ns()).c_str(),
              traces::format_duration(p.end_ns() - p.begin_ns()).c_str());
  if (!run.grid.from_coords) {
    ImGui::TextDisabled(
        "devices have no mesh coordinates: shown in device order, left to right, row by row");
  } else {
    ImGui::TextDisabled(
        "mesh dp=%d x pp=%d x tp=%d: stages left to right, tp stacked, dp replicas below",
        run.grid.dp, run.grid.pp, run.grid.tp);
    // A simulation of identical replicas traces their representatives alone: the cells are those,
    // not the whole mesh (a dp=1 pp=8 tp=8 run showed as "mesh dp=1 x pp=8 x tp=1").
    const std::string note = replicas_note(
        run.timeline.run, static_cast<int64_t>(run.grid.dp) * run.grid.pp * run.grid.tp);
    if (!note.empty()) ImGui::TextDisabled("%s", note.c_str());
  }
}

void MeshView::draw_strip(Session& session, const Run& run, ImVec2 min, ImVec2 size) {
  // The step at a glance: one thin lane per device coloured by activity along time, sampled per
  // pixel column, with the playhead; click or drag to scrub.
  ImDrawList* dl = ImGui::GetWindowDrawList();
  Playhead& p = session.playhead;
  const size_t devices = run.mesh_devices.size();
  const int columns = std::max(1, static_cast<int>(size.x / 2));
  const double range = static_cast<double>(p.end_ns() - p.begin_ns());
  dl->AddRectFilled(min, ImVec2(min.x + size.x, min.y + size.y), IM_COL32(25, 25, 28, 255));
  const StripKey key{&run, p.begin_ns(), p.end_ns(), columns};
  if (!(key == strip_key_)) {
    strip_key_ = key;
    // One lane per pixel row at most: more devices than rows are sampled, not all drawn.
    strip_lanes_ = strip_devices(devices, static_cast<size_t>(std::max(1.0f, size.y)));
    strip_.clear();
    strip_.reserve(strip_lanes_.size() * static_cast<size_t>(columns));
    for (const size_t lane : strip_lanes_) {
      const uint16_t d = run.mesh_devices[lane];
      for (int c = 0; c < columns; ++c) {
        const auto t = p.begin_ns() + static_cast<int64_t>(range * (c + 0.5) / columns);
        strip_.push_back(device_state_at(run.timeline, *run.index, d, t).activity(run.timeline));
      }
    }
  }
  const size_t lanes = strip_lanes_.size();
  const float lane_h = size.y / static_cast<float>(std::max<size_t>(lanes, 1));
  for (size_t l = 0; l < lanes; ++l) {
    for (int c = 0; c < columns; ++c) {
      const Activity a = strip_[l * static_cast<size_t>(columns) + static_cast<size_t>(c)];
      const float x = min.x + size.x * static_cast<float>(c) / static_cast<float>(columns);
      const float y = min.y + lane_h * static_cast<float>(l);
      dl->AddRectFilled(ImVec2(x, y),
                        ImVec2(x + size.x / static_cast<float>(columns) + 0.5f,
                               y + lane_h - (lane_h > 3 ? 1 : 0)),
                        color_of(a));
    }
  }
  const float px = min.x + static_cast<float>(p.fraction()) * size.x;
  dl->AddLine(ImVec2(px, min.y - 2), ImVec2(px, min.y + size.y + 2), IM_COL32(255, 255, 255, 255),
              2);
  ImGui::SetCursorScreenPos(min);
  ImGui::InvisibleButton("##strip", size);
  if (ImGui::IsItemActive()) {
    p.seek_fraction((ImGui::GetIO().MousePos.x - min.x) / size.x);
    session.show_playhead = true;
  }
  ImGui::SetCursorScreenPos(min);
}

void MeshView::draw_cells(Session& session, const Run& run, ImVec2 min, ImVec2 size) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  cells_ = layout_mesh(run.timeline, run.grid, size.x, size.y, 6);
  // Cells outside the panel or beyond the cap cost vertices and show nothing.
  std::erase_if(cells_, [&](const MeshCell& c) { return c.y >= size.y || c.x >= size.x; });
  if (cells_.size() > kMaxMeshCells) cells_.resize(kMaxMeshCells);
  if (cells_.size() < run.mesh_devices.size()) {
    ImGui::TextDisabled("showing %zu of %zu devices (the strip above samples all of them)",
                        cells_.size(), run.mesh_devices.size());
    min.y += ImGui::GetTextLineHeightWithSpacing();
  }
  const int64_t t = session.playhead.t_ns();
  const float line = ImGui::GetFontSize();
  for (MeshCell& cell : cells_) {
    cell.x += min.x;
    cell.y += min.y;
    const DeviceState state = device_state_at(run.timeline, *run.index, cell.device, t);
    const ImVec2 a(cell.x, cell.y), b(a.x + cell.w, a.y + cell.h);
    const Activity act = state.activity(run.timeline);
    const ImU32 fill = color_of(act);
    dl->AddRectFilled(a, b, fill, 4);
    // Compute and communication at once: the comm colour as a band along the bottom.
    if (state.compute && state.comm) {
      const float band = std::min(cell.h * 0.25f, 10.0f);
      dl->AddRectFilled(ImVec2(a.x, b.y - band), b,
                        color_of(activity_of(run.timeline.spans[*state.comm])), 4,
                        ImDrawFlags_RoundCornersBottom);
    }
    dl->AddRect(a, b, darker(fill, 0.5f), 4);
    if (cell.h < line + 8 || cell.w < 2 * line) continue;  // too small for any text
    const bool light_fill =
        act == Activity::kRecv || act == Activity::kCollective || act == Activity::kSend;
    const ImU32 ink = light_fill ? kDarkText : kText;
    const ImVec4 clip(a.x, a.y, b.x, b.y);
    const std::string& dev_name = run.timeline.devices[cell.device].name;
    dl->AddText(nullptr, 0, ImVec2(a.x + 5, a.y + 4), ink, dev_name.c_str(), nullptr, 0, &clip);
    const std::string text = cell_text(run.timeline, state);
    const float text_top = a.y + 6 + line;
    dl->AddText(nullptr, 0, ImVec2(a.x + 5, text_top), ink, text.c_str(), nullptr, cell.w - 10,
                &clip);
    // The headline in large type: F3 / B3 / S3 / R3 / bubble, readable while it plays, in the
    // room below the text (it had been centred over the text's second line).
    const float text_bottom =
        text_top + ImGui::GetFont()->CalcTextSizeA(line, FLT_MAX, cell.w - 10, text.c_str()).y;
    const float room_top = text_bottom + 2;
    const float room =
        b.y - 4 - (state.compute && state.comm ? std::min(cell.h * 0.25f, 10.0f) : 0) - room_top;
    const std::string headline = headline_of(run.timeline, state);
    float big = std::min(std::clamp(cell.h * 0.3f, line, 4 * line), room);
    if (big < line) continue;  // no room for it
    ImVec2 size = ImGui::GetFont()->CalcTextSizeA(big, FLT_MAX, 0, headline.c_str());
    if (size.x > cell.w - 10) {
      // A long kernel name: smaller type that fits the cell, down to the body size (then clipped).
      big = std::max(line, big * (cell.w - 10) / size.x);
      size = ImGui::GetFont()->CalcTextSizeA(big, FLT_MAX, 0, headline.c_str());
    }
    const float headline_x = size.x > cell.w - 10 ? a.x + 5 : a.x + (cell.w - size.x) / 2;
    dl->AddText(ImGui::GetFont(), big, ImVec2(headline_x, room_top + (room - size.y) / 2), ink,
                headline.c_str(), nullptr, 0, &clip);
  }
}

}  // namespace meshscope::gui
