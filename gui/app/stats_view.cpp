// Stats view drawing.
#include "gui/app/stats_view.h"

#include <imgui.h>

#include <algorithm>
#include <string>

#include "gui/view/stats_model.h"
#include "traces/analysis.h"

namespace meshscope::gui {
namespace {

constexpr float kNamePx = 200;
// The numbers column: as wide as its widest text ("bubble 100.0" had lost its "%" at 260 px).
float numbers_px() { return ImGui::CalcTextSize("busy 100.0%  comm 100.0%  bubble 100.0%").x + 16; }

void legend() {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  for (size_t i = 0; i < static_cast<size_t>(StatPart::kCount); ++i) {
    if (i > 0) ImGui::SameLine();
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float s = ImGui::GetFontSize();
    dl->AddRectFilled(p, ImVec2(p.x + s, p.y + s), color_of(static_cast<StatPart>(i)));
    ImGui::Dummy(ImVec2(s, s));
    ImGui::SameLine(0, 3);
    ImGui::TextUnformatted(std::string(name(static_cast<StatPart>(i))).c_str());
  }
}

}  // namespace

void StatsView::draw(Session& session) {
  Run* run = session.primary_run();
  if (!run) {
    ImGui::TextUnformatted("No trace open.");
    return;
  }
  const StatsModel& m = run->stats;
  const traces::Timeline& t = run->timeline;
  ImGui::Text("%s", run->label.c_str());
  if (run->analysis.devices.empty()) {
    // Only host processes (a CPU profile of no device): a bubble of 0% and a step of 0 ns would
    // read as a busy device. As `meshscope analyze` says it.
    ImGui::TextWrapped(
        "no GPU or accelerator activity found (host events only): no device time to analyze; "
        "the timeline shows the host threads");
    return;
  }
  if (run->analysis.step_time_ns == 0) {
    ImGui::TextWrapped(
        "every device activity here lasts 0 ns at one instant: a window of no time, nothing to "
        "measure");
  }
  ImGui::Text("overall bubble fraction %.1f%%   step time %s   steps %zu   devices %zu",
              m.bubble_fraction * 100, traces::format_duration(m.step_time_ns).c_str(), m.steps,
              m.bars.size());
  if (m.host_devices > 0) {
    ImGui::SameLine();
    ImGui::TextDisabled("(+ %zu host %s: host threads are no device, see the timeline)",
                        m.host_devices, m.host_devices == 1 ? "process" : "processes");
  }
  if (!run->analysis.has_stage_annotations) {
    ImGui::TextDisabled(
        "no pipeline-stage annotations: idle time is not split into warm-up / wait / cool-down");
  }
  legend();
  ImGui::Separator();

  const float bar_h = std::clamp(ImGui::GetContentRegionAvail().y * 0.55f /
                                     static_cast<float>(std::max<size_t>(m.bars.size(), 1)),
                                 6.0f, 24.0f);
  const float row_h = bar_h + 4 + ImGui::GetStyle().ItemSpacing.y;
  ImGui::BeginChild("##bars", ImVec2(0, std::min(ImGui::GetContentRegionAvail().y * 0.6f,
                                                 row_h * static_cast<float>(m.bars.size()) +
                                                     2 * ImGui::GetStyle().WindowPadding.y)));
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float numbers_w = numbers_px();
  const float width = std::max(50.0f, ImGui::GetContentRegionAvail().x - kNamePx - numbers_w);
  for (const StatsBar& bar : m.bars) {
    const ImVec2 p = ImGui::GetCursorScreenPos();
    dl->AddText(ImVec2(p.x, p.y + (bar_h - ImGui::GetFontSize()) / 2), IM_COL32(220, 220, 220, 255),
                t.devices[bar.device].name.c_str());
    float x = p.x + kNamePx;
    for (size_t i = 0; i < bar.ns.size(); ++i) {
      if (m.window_ns <= 0) break;
      const float w = width * static_cast<float>(bar.ns[i]) / static_cast<float>(m.window_ns);
      if (w > 0)
        dl->AddRectFilled(ImVec2(x, p.y), ImVec2(x + w, p.y + bar_h),
                          color_of(static_cast<StatPart>(i)));
      x += w;
    }
    const auto& d = run->analysis.devices[bar.device];
    char numbers[160];
    std::snprintf(
        numbers, sizeof numbers, "busy %4.1f%%  comm %4.1f%%  bubble %4.1f%%",
        m.window_ns > 0 ? 100.0 * static_cast<double>(d.busy_ns) / static_cast<double>(m.window_ns)
                        : 0.0,
        m.window_ns > 0
            ? 100.0 * static_cast<double>(d.communication_ns) / static_cast<double>(m.window_ns)
            : 0.0,
        bar.bubble_fraction * 100);
    dl->AddText(ImVec2(p.x + kNamePx + width + 10, p.y + (bar_h - ImGui::GetFontSize()) / 2),
                IM_COL32(220, 220, 220, 255), numbers);
    ImGui::Dummy(ImVec2(kNamePx + width + numbers_w, bar_h + 4));
  }
  ImGui::EndChild();

  ImGui::Separator();
  ImGui::TextUnformatted("Largest idle gaps (click to show in the timeline)");
  if (ImGui::BeginTable(
          "##gaps", 4,
          ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_BordersInnerV)) {
    ImGui::TableSetupColumn("length");
    ImGui::TableSetupColumn("device");
    ImGui::TableSetupColumn("from");
    ImGui::TableSetupColumn("to");
    ImGui::TableHeadersRow();
    const int64_t origin = run->begin_ns();
    for (size_t i = 0; i < m.largest_gaps.size(); ++i) {
      const IdleGap& g = m.largest_gaps[i];
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      const std::string len =
          traces::format_duration(g.end_ns - g.begin_ns) + "##gap" + std::to_string(i);
      if (ImGui::Selectable(len.c_str(), false, ImGuiSelectableFlags_SpanAllColumns)) {
        session.jump = JumpRequest{g.device, g.begin_ns, g.end_ns};
        session.switch_to = ViewKind::kTimeline;
      }
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(t.devices[g.device].name.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(traces::format_duration(g.begin_ns - origin).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(traces::format_duration(g.end_ns - origin).c_str());
    }
    ImGui::EndTable();
  }
}

}  // namespace meshscope::gui
