// The top bar, the error list and the view tabs.
#include "gui/app/app.h"

#include <imgui.h>

#include <cstdio>
#include <exception>
#include <string>

namespace meshscope::gui {

App::App(std::optional<Predictor> predictor) : whatif_(std::move(predictor)) {}

bool App::open(const std::filesystem::path& path) {
  try {
    std::unique_ptr<Run> run = load_run(path, import_options_);
    for (const std::string& w : run->import_warnings)
      session_.warnings.push_back(path.string() + ": " + w);
    session_.add_run(std::move(run));
    return true;
  } catch (const std::exception& e) {
    session_.errors.emplace_back(e.what());
    return false;
  }
}

size_t App::open_dropped(const std::vector<std::string>& paths) {
  size_t opened = 0;
  for (const std::string& p : paths) opened += open(p) ? 1 : 0;
  return opened;
}

void App::frame(float delta_s) {
  session_.playhead.advance(delta_s);
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(vp->WorkPos);
  ImGui::SetNextWindowSize(vp->WorkSize);
  const ImGuiWindowFlags flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                                 ImGuiWindowFlags_NoSavedSettings |
                                 ImGuiWindowFlags_NoBringToFrontOnFocus |
                                 ImGuiWindowFlags_NoScrollWithMouse | ImGuiWindowFlags_NoScrollbar;
  ImGui::Begin("meshscope", nullptr, flags);
  draw_top_bar();
  draw_errors();
  if (ImGui::BeginTabBar("##views")) {
    const std::optional<ViewKind> requested = std::exchange(session_.switch_to, std::nullopt);
    for (size_t i = 0; i < static_cast<size_t>(ViewKind::kCount); ++i) {
      const auto v = static_cast<ViewKind>(i);
      const ImGuiTabItemFlags tab_flags = requested == v ? ImGuiTabItemFlags_SetSelected : 0;
      if (!ImGui::BeginTabItem(std::string(name(v)).c_str(), nullptr, tab_flags)) continue;
      view_ = v;
      switch (v) {
        case ViewKind::kTimeline:
          timeline_.draw(session_);
          break;
        case ViewKind::kMesh:
          mesh_.draw(session_);
          break;
        case ViewKind::kStats:
          stats_.draw(session_);
          break;
        case ViewKind::kCompare:
          compare_.draw(session_);
          break;
        default:
          whatif_.draw(session_);
          break;
      }
      ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
  }
  ImGui::End();
}

void App::draw_top_bar() {
  ImGui::TextUnformatted("meshscope");
  ImGui::SameLine();
  if (!session_.runs.empty()) {
    ImGui::SetNextItemWidth(300);
    if (ImGui::BeginCombo("##run", session_.runs[session_.primary]->label.c_str())) {
      for (size_t i = 0; i < session_.runs.size(); ++i) {
        const std::string item = session_.runs[i]->label + "##run" + std::to_string(i);
        if (ImGui::Selectable(item.c_str(), i == session_.primary)) {
          session_.primary = i;
          const Run& r = *session_.runs[i];
          session_.playhead.set_range(r.begin_ns(), r.analysis.windows.empty()
                                                        ? r.end_ns()
                                                        : r.analysis.windows.front().end_ns);
        }
      }
      ImGui::EndCombo();
    }
    ImGui::SameLine();
  }
  ImGui::SetNextItemWidth(360);
  const bool enter =
      ImGui::InputTextWithHint("##open", "trace file or folder (or drop files on the window)",
                               open_path_, sizeof open_path_, ImGuiInputTextFlags_EnterReturnsTrue);
  ImGui::SameLine();
  if ((ImGui::Button("Open") || enter) && open_path_[0]) {
    if (open(open_path_)) open_path_[0] = '\0';
  }
}

void App::draw_errors() {
  const auto list = [](std::vector<std::string>& messages, const char* what, ImU32 colour) {
    for (size_t i = 0; i < messages.size();) {
      // The button first: after a wrapped line it would land past the window's right edge.
      const std::string dismiss = "dismiss##" + std::string(what) + std::to_string(i);
      const bool dismissed = ImGui::SmallButton(dismiss.c_str());
      ImGui::SameLine();
      ImGui::PushStyleColor(ImGuiCol_Text, colour);
      ImGui::TextWrapped("%s: %s", what, messages[i].c_str());
      ImGui::PopStyleColor();
      if (dismissed) {
        messages.erase(messages.begin() + static_cast<std::ptrdiff_t>(i));
        continue;
      }
      ++i;
    }
  };
  list(session_.errors, "error", IM_COL32(255, 110, 110, 255));
  list(session_.warnings, "warning", IM_COL32(240, 200, 90, 255));
}

}  // namespace meshscope::gui
