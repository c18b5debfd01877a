// Files dropped on the window: the drop callback GLFW calls (the one the window registered,
// called here as the OS would, with paths good and bad), then the hand-over the window loop
// makes each frame (App::open_dropped), then frames drawn with what came of it.
#include <gtest/gtest.h>

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <unistd.h>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gui/app/app.h"
#include "gui/app/platform.h"
#include "gui/view/synthetic.h"
#include "traces/chrome_export.h"

namespace meshscope::gui {
namespace {

namespace fs = std::filesystem;

bool have_display() {
  const char* d = std::getenv("DISPLAY");
  return d && *d;
}

class Drop : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_display()) GTEST_SKIP() << "no X display: ctest runs this under Xvfb";
    dir_ = fs::temp_directory_path() / ("meshscope_drop_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    SyntheticOptions o;
    o.pp = 2;
    o.microbatches = 2;
    o.steps = 1;
    good_ = dir_ / "good.json";
    traces::write_chrome_trace(make_synthetic_pipeline(o), good_);
    std::ifstream in(good_);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    cut_ = dir_ / "cut.json";
    std::ofstream(cut_) << text.substr(0, text.size() / 2);
    empty_ = dir_ / "empty.json";
    std::ofstream(empty_) << R"({"traceEvents":[]})";
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }

  // What the OS does on a drop: GLFW calls the callback the window registered.
  static void drop(Window& window, const std::vector<std::string>& paths) {
    GLFWdropfun callback = glfwSetDropCallback(window.handle(), nullptr);
    glfwSetDropCallback(window.handle(), callback);
    ASSERT_NE(callback, nullptr) << "the window registered no drop callback";
    std::vector<const char*> c_paths;
    for (const std::string& p : paths) c_paths.push_back(p.c_str());
    callback(window.handle(), static_cast<int>(c_paths.size()), c_paths.data());
  }

  // One frame of the window loop, as main.cpp runs it.
  static void frame(Window& window, App& app) {
    window.begin_frame();
    app.open_dropped(window.take_dropped_paths());
    app.frame(1.0f / 60);
    window.end_frame(false);
  }

  fs::path dir_, good_, cut_, empty_;
};

TEST_F(Drop, DroppedFilesOpenAndBadOnesShowTheirErrors) {
  Window window({800, 600, false, "drop test"});
  App app;
  frame(window, app);
  EXPECT_TRUE(app.session().runs.empty());

  const fs::path missing = dir_ / "missing.json";
  drop(window, {missing.string(), cut_.string(), good_.string(), empty_.string()});
  frame(window, app);
  // The good file opened and is shown; each bad one left one error naming it.
  ASSERT_EQ(app.session().runs.size(), 1u);
  EXPECT_EQ(app.session().runs[0]->label, "good.json");
  EXPECT_EQ(app.session().primary, 0u);
  EXPECT_FALSE(app.session().runs[0]->timeline.spans.empty());
  const auto& errors = app.session().errors;
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_NE(errors[0].find("missing.json: no such file"), std::string::npos) << errors[0];
  EXPECT_NE(errors[1].find("cut.json: byte "), std::string::npos) << errors[1];
  EXPECT_NE(errors[2].find("empty.json: no usable spans"), std::string::npos) << errors[2];

  // Each drop is handed over once; later frames (with the errors on screen) open nothing more.
  frame(window, app);
  EXPECT_EQ(app.session().runs.size(), 1u);
  EXPECT_EQ(app.session().errors.size(), 3u);

  // A second good drop, a file and a folder of per-rank files: two more runs, the last shown.
  const fs::path ranks = dir_ / "ranks";
  fs::create_directories(ranks);
  fs::copy_file(good_, ranks / "rank0.json");
  drop(window, {good_.string()});
  drop(window, {ranks.string()});
  frame(window, app);
  ASSERT_EQ(app.session().runs.size(), 3u);
  EXPECT_EQ(app.session().primary, 2u);
  EXPECT_EQ(app.session().runs[2]->label, "ranks");
  EXPECT_EQ(app.session().errors.size(), 3u);
}

// A folder of rank files of two runs (1F1B's ranks 0, 2, 3 and GPipe's rank 1, recorded 67 s
// apart) opens, as `analyze` reads it, and the window says what the importer found, as `analyze`
// does on stderr. It had opened without a word, one 67-s step with arrows back in time.
TEST_F(Drop, ARunsImportWarningsAreShownBesideIt) {
  const fs::path torch = fs::path(MESHSCOPE_SOURCE_DIR) / "tests/fixtures/torch";
  const fs::path mixed = dir_ / "mixed";
  fs::create_directories(mixed);
  for (const char* f : {"rank0.json.gz", "rank2.json.gz", "rank3.json.gz"})
    fs::copy_file(torch / "1F1B" / f, mixed / f);
  fs::copy_file(torch / "GPipe" / "rank1.json.gz", mixed / "rank1.json.gz");
  Window window({800, 600, false, "drop test"});
  App app;
  drop(window, {mixed.string(), good_.string()});
  frame(window, app);
  ASSERT_EQ(app.session().runs.size(), 2u);
  EXPECT_TRUE(app.session().errors.empty());
  const auto& warnings = app.session().warnings;
  const auto said = std::find_if(warnings.begin(), warnings.end(), [&](const std::string& w) {
    return w.starts_with(mixed.string() + ": ") &&
           w.find("overlap none of the first rank's") != std::string::npos &&
           w.find("rank1.json.gz") != std::string::npos;
  });
  EXPECT_NE(said, warnings.end()) << ::testing::PrintToString(warnings);
  EXPECT_FALSE(app.session().runs[0]->import_warnings.empty());
  EXPECT_TRUE(app.session().runs[1]->import_warnings.empty());  // the synthetic trace: none
  frame(window, app);                                           // drawn with the warnings on screen
}

TEST_F(Drop, NothingDroppedNothingOpened) {
  Window window({640, 480, false, "drop test"});
  App app;
  drop(window, {});
  frame(window, app);
  EXPECT_TRUE(window.take_dropped_paths().empty());
  EXPECT_TRUE(app.session().runs.empty());
  EXPECT_TRUE(app.session().errors.empty());
}

}  // namespace
}  // namespace meshscope::gui
