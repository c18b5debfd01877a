// Hand-written JSON files: every way a file can be wrong is an error naming the file and where.
#include "traces/json_file.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

namespace meshscope::traces {
namespace {

class JsonFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("meshscope_json_file_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // The error loading `text` from a file gives, with the file's path replaced by "F".
  std::string error_of(const std::string& text, std::string_view kind = "JSON file") {
    const std::string path = (dir_ / "f.json").string();
    std::ofstream(path, std::ios::binary) << text;
    try {
      load_json_file(path, kind);
    } catch (const std::runtime_error& e) {
      std::string m = e.what();
      return m.rfind(path, 0) == 0 ? "F" + m.substr(path.size()) : m;
    }
    return "(loaded)";
  }

  std::filesystem::path dir_;
};

TEST_F(JsonFile, AKeyGivenTwiceIsNamedWithBothBytes) {
  // The second "mesh" would replace the first without a word in a DOM parser.
  EXPECT_EQ(error_of(R"({"mesh": {"dp": 2}, "mesh": {"tp": 4}})"),
            "F: key 'mesh' given twice (bytes 1 and 20)");
  // Nested: named from the top; the same key in two objects is no duplicate.
  EXPECT_EQ(error_of(R"({"a": {"x": 1}, "b": {"x": 1, "y": [{"k": 1}, {"k": 2, "k": 3}]}})"),
            "F: key 'b.y.k' given twice (bytes 47 and 55)");
  EXPECT_EQ(error_of(R"({"a": {"x": 1}, "b": {"x": 1}, "s": "x: \"x\": x"})"), "(loaded)");
  // Malformed text with two colons after one key is the parser's error, not a key given twice.
  EXPECT_EQ(error_of(R"({"a": : 1})").rfind("F: malformed JSON at byte 6", 0), 0u);
  // Escapes are compared as written: a newline key and an "n" key are two keys.
  EXPECT_EQ(error_of(R"({"\n": 1, "n": 2})"), "(loaded)");
  EXPECT_EQ(error_of(R"({"a\"b": 1, "a\"b": 2})"), "F: key 'a\\\"b' given twice (bytes 1 and 12)");
  // Written with different escapes, the same key is still given twice.
  EXPECT_EQ(error_of(R"({"x": {"\u006e": 1, "n": 2}})"),
            "F: key 'n' given twice (written with different escapes)");
  // A key's control bytes are escaped in the message (the scan runs before the parser would
  // refuse them).
  EXPECT_EQ(error_of("{\"a\x1b[2J\": 1, \"a\x1b[2J\": 2}"),
            "F: key 'a\\x1b[2J' given twice (bytes 1 and 13)");
}

TEST_F(JsonFile, MalformedTextSaysLineColumnAndWhatWasExpected) {
  const std::string e = error_of("{\n  \"model\": {\"layers\": 4,}\n}\n");
  EXPECT_EQ(e.rfind("F: malformed JSON at byte 26 (line 2, column 25): syntax error", 0), 0u) << e;
  EXPECT_NE(e.find("expected string literal"), std::string::npos) << e;
  // An empty file is malformed too, past its last character.
  EXPECT_EQ(error_of("").rfind("F: malformed JSON at byte 0 (line 1, column 1)", 0), 0u);
}

TEST_F(JsonFile, ANumberBeyondADoubleIsPlacedAtItsFirstDigit) {
  EXPECT_EQ(error_of(R"({"model": {"layers": 1e999}})"),
            "F: number '1e999' out of range at byte 21");
}

TEST_F(JsonFile, NestingDeeperThanTheBoundIsRefusedBeforeParsing) {
  const std::string deep =
      R"({"model": {"x": )" + std::string(20000, '[') + std::string(20000, ']') + "}}";
  EXPECT_EQ(error_of(deep), "F: key 'model.x': nested deeper than 16 levels at byte 30");
}

TEST_F(JsonFile, ADirectoryOrAMissingFileIsNamedAsTheKindOfFileItShouldBe) {
  try {
    load_json_file(dir_.string(), "hardware file");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), dir_.string() + ": is a directory, not a hardware file");
  }
  const std::string none = (dir_ / "none.json").string();
  try {
    load_json_file(none, "calibration file");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              none + ": cannot open calibration file: No such file or directory");
  }
}

// A trace given where hand-written JSON goes: its binary was read as JSON and refused as
// "nested deeper than 16 levels at byte 14566". The real fixture, then an SQLite header.
TEST_F(JsonFile, ACompressedTraceOrAnSqliteFileIsNamedAsWhatItIs) {
  std::ifstream in(
      std::string(MESHSCOPE_SOURCE_DIR) + "/tests/fixtures/kineto_2rank_a100_nccl_rank0.json.gz",
      std::ios::binary);
  const std::string gz((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(gz.size(), 2u);
  EXPECT_EQ(error_of(gz, "calibration file"),
            "F: is gzip-compressed, not a calibration file (a calibration file is plain JSON; a "
            "compressed trace goes to analyze or calibrate)");
  EXPECT_EQ(error_of(std::string("SQLite format 3\0", 16) + std::string(100, '\x01')),
            "F: is an SQLite database (an Nsight Systems export?), not a JSON file");
}

TEST_F(JsonFile, AValidFileLoads) {
  const std::string path = (dir_ / "ok.json").string();
  std::ofstream(path) << R"({"a": [1, 2, {"b": "c"}], "d": 1.5e3})";
  const nlohmann::json j = load_json_file(path);
  EXPECT_EQ(j.at("a").at(2).at("b"), "c");
  EXPECT_DOUBLE_EQ(j.at("d").get<double>(), 1500.0);
}

TEST(JsonFileKnownKeys, AKeyTheListLacksIsNamedDottedWithTheList) {
  const auto error_of = [](const nlohmann::json& j, const std::string& prefix) -> std::string {
    try {
      require_known_keys(j, {"a", "b"}, "F", prefix);
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "(known)";
  };
  EXPECT_EQ(error_of({{"a", 1}, {"b", 2}}, ""), "(known)");
  EXPECT_EQ(error_of({{"a", 1}, {"c", 2}}, "x.y."), "F: key 'x.y.c': unknown key (known: a, b)");
  EXPECT_EQ(error_of(nlohmann::json::array(), "x."), "F: key 'x': must be an object");
  EXPECT_EQ(error_of(5, ""), "F: key '(top)': must be an object");
}

TEST(JsonFileLineAndColumn, CountsFromOne) {
  EXPECT_EQ(line_and_column("ab\ncd", 0), "line 1, column 1");
  EXPECT_EQ(line_and_column("ab\ncd", 4), "line 2, column 2");
  EXPECT_EQ(line_and_column("ab", 99), "line 1, column 3");
}

}  // namespace
}  // namespace meshscope::traces
