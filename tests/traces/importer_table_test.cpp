// The importer table: how load_trace chooses an importer, by name or by the file's first bytes.
#include "traces/import/importer_table.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/traces/import_test_util.h"
#include "traces/import/load_trace.h"

namespace meshscope::traces {
namespace {

constexpr std::string_view kJson =
    R"({"traceEvents":[{"ph":"X","name":"k","pid":0,"tid":1,"ts":1,"dur":2}]})";

TEST(ImporterTable, EveryFormatHasOneRowAndTheLastIsTheFallback) {
  const auto rows = importer::importers();
  ASSERT_GE(rows.size(), 2u);
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(importer::importer_named(rows[i].format), &rows[i]);
    EXPECT_FALSE(rows[i].suffixes.empty()) << rows[i].format;
    EXPECT_NE(rows[i].load, nullptr) << rows[i].format;
    // Only the last row may claim everything: a fallback earlier would hide the rows after it.
    EXPECT_EQ(rows[i].claims == nullptr, i + 1 == rows.size()) << rows[i].format;
  }
  EXPECT_EQ(importer::importer_named(kAutoFormat), nullptr);
}

TEST(ImporterTable, AutoTakesTheRowThatClaimsTheBytesAndANamedFormatIsObeyed) {
  testing::TempFile json(".json", kJson);
  EXPECT_EQ(detect_trace_format(json.path()), "chrome-json");
  EXPECT_EQ(load_trace(json.path()).spans.size(), 1u);
  // Forced to SQLite, the JSON is refused by the SQLite importer, not read as JSON.
  ImportOptions sqlite;
  sqlite.format = "nsys-sqlite";
  EXPECT_THROW(load_trace(json.path(), sqlite), ImportError);
}

TEST(ImporterTable, AnUnknownFormatNamesTheFileAndTheKnownOnes) {
  testing::TempFile json(".json", kJson);
  ImportOptions options;
  options.format = "perfetto-proto";
  try {
    (void)load_trace(json.path(), options);
    FAIL() << "an unknown format was accepted";
  } catch (const ImportError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(json.path().string()), std::string::npos) << what;
    EXPECT_NE(what.find("perfetto-proto"), std::string::npos) << what;
    EXPECT_NE(what.find("chrome-json"), std::string::npos) << what;
    EXPECT_NE(what.find("nsys-sqlite"), std::string::npos) << what;
  }
}

TEST(ImporterTable, AFolderScanTakesEveryRowsSuffixes) {
  testing::TempFile dir("");
  std::filesystem::create_directories(dir.path());
  for (const importer::Importer& i : importer::importers()) {
    for (const std::string_view suffix : i.suffixes) {
      std::ofstream(dir.path() / ("t" + std::string(suffix))) << "x";
    }
  }
  std::ofstream(dir.path() / "notes.txt") << "x";
  size_t suffixes = 0;
  for (const importer::Importer& i : importer::importers()) suffixes += i.suffixes.size();
  EXPECT_EQ(trace_files_in(dir.path()).size(), suffixes);
}

}  // namespace
}  // namespace meshscope::traces
