// Opening a trace in the viewer: a file none of whose events could be used opens nothing, and
// since no banner of warnings is drawn beside an empty window, the error says what was skipped.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "gui/app/run.h"

namespace meshscope::gui {
namespace {

TEST(LoadRun, ATraceOfOnlySkippedEventsSaysWhatWasSkipped) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / "meshscope_gui_all_skipped.json";
  {
    // Two events at 9.3e15 us: past the time range every reader keeps.
    std::ofstream out(file);
    out << R"({"traceEvents": [{"name": "k", "ph": "X", "ts": 9.3e15, "dur": 1, "pid": 0, "tid": 0},
                               {"name": "k", "ph": "X", "ts": 9.3e15, "dur": 1, "pid": 0, "tid": 0}]})";
  }
  try {
    load_run(file, {});
    FAIL() << "a trace of no usable span opened";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("no usable spans"), std::string::npos) << what;
    EXPECT_NE(what.find("skipped: 2 events with a non-finite or out-of-range number"),
              std::string::npos)
        << what;
  }
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace meshscope::gui
