// The streaming JSON layer: exact µs -> ns, string decoding, events and top-level members handed
// over intact whatever the chunk boundaries, and the one-line errors with byte offsets.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/traces/import_test_util.h"
#include "traces/import/chrome_reader.h"
#include "traces/import/json_reader.h"

namespace meshscope::traces::importer {
namespace {

using testing::TrickleSource;

// What a sink saw, copied out of the parser's short-lived views.
struct Recorded {
  std::vector<std::string> events;  // "ph|name|ts|k=v,k=v"
  std::vector<std::string> members;
};

class RecordingSink : public ChromeSink {
 public:
  Recorded seen;
  void on_event(const ChromeEvent& e) override {
    std::string line = std::string(e.ph.text) + "|" + std::string(e.name.text) + "|" +
                       std::string(e.ts.text) + "|";
    for (uint32_t i = 0; i < e.arg_count; ++i) {
      line += std::string(e.args[i].key) + "=" + std::string(e.args[i].value.text) + ";";
    }
    seen.events.push_back(line);
  }
  void on_member(const ChromeMember& m) override {
    std::string line = std::string(m.key) + "=" + std::string(m.value.text) + "{";
    for (uint32_t i = 0; i < m.member_count; ++i) {
      line += std::string(m.members[i].key) + ":" + std::string(m.members[i].value.text) + ";";
    }
    seen.members.push_back(line + "} raw " + std::string(m.raw));
  }
};

Recorded read_all(ByteSource& source, ImportReport* report = nullptr) {
  RecordingSink sink;
  ImportReport local;
  read_chrome_json(source, "t.json", ImportOptions{}, sink, report ? *report : local);
  return sink.seen;
}

Recorded read_string(std::string_view json, ImportReport* report = nullptr) {
  auto source = open_memory_source(json);
  return read_all(*source, report);
}

std::string error_of(std::string_view json, const ImportOptions& options = {}) {
  auto source = open_memory_source(json);
  RecordingSink sink;
  ImportReport report;
  try {
    read_chrome_json(*source, "t.json", options, sink, report);
  } catch (const ImportError& e) {
    return e.what();
  }
  return "no error";
}

TEST(MicrosToNs, ExactForThreeDecimals) {
  int64_t ns = 0;
  ASSERT_TRUE(micros_text_to_ns("4458676522690.655", ns));
  EXPECT_EQ(ns, 4458676522690655);
  ASSERT_TRUE(micros_text_to_ns("12", ns));
  EXPECT_EQ(ns, 12000);
  ASSERT_TRUE(micros_text_to_ns("-5.25", ns));
  EXPECT_EQ(ns, -5250);
  ASSERT_TRUE(micros_text_to_ns("0.1", ns));
  EXPECT_EQ(ns, 100);
}

TEST(MicrosToNs, RoundsBelowTheNanosecondHalfAwayFromZero) {
  int64_t ns = 0;
  ASSERT_TRUE(micros_text_to_ns("0.0005", ns));
  EXPECT_EQ(ns, 1);
  ASSERT_TRUE(micros_text_to_ns("0.0004999", ns));
  EXPECT_EQ(ns, 0);
  ASSERT_TRUE(micros_text_to_ns("-1.0006", ns));
  EXPECT_EQ(ns, -1001);
}

TEST(MicrosToNs, ExponentsAndLimits) {
  int64_t ns = 0;
  ASSERT_TRUE(micros_text_to_ns("1.5e3", ns));
  EXPECT_EQ(ns, 1500000);
  ASSERT_TRUE(micros_text_to_ns("9223372036854773", ns));  // just inside int64 ns
  EXPECT_EQ(ns, 9223372036854773000);
  EXPECT_FALSE(micros_text_to_ns("9223372036854776", ns));  // 2^63 ns and beyond
  EXPECT_FALSE(micros_text_to_ns("1e300", ns));
  EXPECT_FALSE(micros_text_to_ns("NaN", ns));
  EXPECT_FALSE(micros_text_to_ns("-Infinity", ns));
}

TEST(ChromeReader, DecodesEscapesAndUnicode) {
  const auto seen =
      read_string(R"([{"ph":"X","name":"q\"b\\s\/\b\f\n\r\t\u00e9\ud83d\ude00 \udc00 x","ts":1}])");
  ASSERT_EQ(seen.events.size(), 1u);
  // é (U+00E9), 😀 (U+1F600 from a surrogate pair), and a lone surrogate as U+FFFD.
  EXPECT_EQ(seen.events[0], "X|q\"b\\s/\b\f\n\r\t\xC3\xA9\xF0\x9F\x98\x80 \xEF\xBF\xBD x|1|");
}

TEST(ChromeReader, KeepsScalarArgsAndSkipsNestedOnes) {
  const auto seen =
      read_string(R"({"traceEvents":[{"ph":"X","ts":2.5,"name":"k","args":{"grid":[1,[2,{"a":3}]],)"
                  R"("stream":7,"bad":null,"ok":true,"nested":{"x":{"y":1}},"s":"v"}}]})");
  ASSERT_EQ(seen.events.size(), 1u);
  EXPECT_EQ(seen.events[0], "X|k|2.5|grid=;stream=7;bad=null;ok=true;nested=;s=v;");
}

TEST(ChromeReader, HandsOverTopLevelMembersWithTheirText) {
  const auto seen =
      read_string(R"({"distributedInfo": {"rank": 1, "world_size": 2, "pg_config": [{"a": 1}]},)"
                  R"( "traceEvents": [], "baseTimeNanoseconds": 1711964646000000000})");
  ASSERT_EQ(seen.members.size(), 2u);
  EXPECT_EQ(seen.members[0],
            "distributedInfo={rank:1;world_size:2;pg_config:;} raw "
            R"({"rank": 1, "world_size": 2, "pg_config": [{"a": 1}]})");
  EXPECT_EQ(seen.members[1], "baseTimeNanoseconds=1711964646000000000{} raw 1711964646000000000");
}

TEST(ChromeReader, ChunkBoundariesDoNotChangeWhatIsRead) {
  std::string json = "\xEF\xBB\xBF{\"schemaVersion\": 1, \"traceEvents\": [\n";
  for (int i = 0; i < 50; ++i) {
    if (i > 0) json += ",\n";
    json += R"(  {"ph": "X", "cat": "kernel", "name": "k\u00e9)" + std::to_string(i) +
            R"(", "pid": 0, "tid": 7, "ts": )" + std::to_string(1000 + i) +
            R"(.125, "dur": 1e1, "args": {"grid": [1, 2, 3], "stream": 7, "x": -0.5e-3}})";
  }
  json += "\n], \"baseTimeNanoseconds\": 5}\n";
  const Recorded whole = read_string(json);
  TrickleSource trickle(json);
  const Recorded trickled = read_all(trickle);
  ASSERT_EQ(whole.events.size(), 50u);
  EXPECT_EQ(whole.events, trickled.events);
  EXPECT_EQ(whole.members, trickled.members);
}

// Empty arrays and objects, and a trailing comma, decided by the byte after '[', '{' or ',':
// when a chunk ends right there the reader must wait for that byte, not guess (a file source
// hands over its first 16 bytes alone, exactly `{"traceEvents":[`).
TEST(ChromeReader, EmptyContainersReadTheSameWhateverTheChunkBoundaries) {
  for (const std::string json :
       {R"({"traceEvents":[]})", "[]", "[ ]", R"({})", R"({"a":{},"traceEvents":[],"b":{}})",
        R"({"traceEvents":[{"ph":"X","args":{}},]})", R"([{"ph":"X"},])",
        R"({"traceEvents":[{}]})"}) {
    const Recorded whole = read_string(json);
    TrickleSource trickle(json);
    const Recorded trickled = read_all(trickle);
    EXPECT_EQ(whole.events, trickled.events) << json;
    EXPECT_EQ(whole.members, trickled.members) << json;
  }
  EXPECT_EQ(read_string(R"({"traceEvents":[{"ph":"X","args":{}},]})").events.size(), 1u);
}

TEST(ChromeReader, ArrayFormWithoutClosingBracketIsAcceptedWithAWarning) {
  ImportReport report;
  const auto seen = read_string(R"([{"ph":"X","ts":1},{"ph":"X","ts":2},)"
                                "\n",
                                &report);
  EXPECT_EQ(seen.events.size(), 2u);
  EXPECT_EQ(report.count(ImportWarning::kArrayNotClosed), 1u);
}

TEST(ChromeReader, TrailingCommaBeforeTheEndOfTheArrayIsAccepted) {
  EXPECT_EQ(read_string(R"({"traceEvents":[{"ph":"X","ts":1},]})").events.size(), 1u);
}

TEST(ChromeReader, ErrorsNameTheFileAndTheByte) {
  EXPECT_EQ(error_of(R"({"traceEvents":[{"ph":"X",}]})"), "t.json: byte 26: expected a string");
  EXPECT_EQ(error_of(R"([{"ph":"X","ts":01}])"),
            "t.json: byte 17: expected ',' or '}' in a trace event");
  EXPECT_EQ(error_of(R"([{"ph":"X","ts":1.}])"),
            "t.json: byte 18: invalid number: digit expected after '.'");
  EXPECT_EQ(error_of("[{\"name\":\"a\x01\"}]"),
            "t.json: byte 11: control character in string (or unterminated string)");
  EXPECT_EQ(error_of(R"([{"ph":tru}])"), "t.json: byte 10: invalid literal");
  EXPECT_EQ(error_of("<html>"),
            "t.json: byte 0: not a Chrome trace: expected '{' or '[' at the start");
  EXPECT_EQ(error_of("[] x"), "t.json: byte 3: unexpected content after the trace");
  EXPECT_EQ(error_of(" \n "), "t.json: byte 3: empty file: not a trace");
}

TEST(ChromeReader, InvalidUtf8IsAnErrorAtItsByte) {
  EXPECT_EQ(error_of("[{\"name\":\"ab\xC3\x28\"}]"), "t.json: byte 13: invalid UTF-8 in string");
  EXPECT_EQ(error_of("[{\"name\":\"\xC0\xAF\"}]"), "t.json: byte 10: invalid UTF-8 in string");
  EXPECT_EQ(error_of("[{\"name\":\"\xED\xA0\x80\"}]"),  // a UTF-16 surrogate encoded
            "t.json: byte 11: invalid UTF-8 in string");
  EXPECT_EQ(error_of("[{\"name\":\"\xF4\x90\x80\x80\"}]"),  // beyond U+10FFFF
            "t.json: byte 11: invalid UTF-8 in string");
}

TEST(ChromeReader, TruncationIsAnErrorAtTheEndOfTheData) {
  const std::string json = R"({"traceEvents":[{"ph":"X","ts":1},{"ph":"X","na)";
  EXPECT_EQ(error_of(json), "t.json: byte " + std::to_string(json.size()) +
                                ": unexpected end of file inside the trace event that starts at "
                                "byte 34 (truncated?)");
  EXPECT_EQ(error_of(R"({"traceEvents":[])"),
            "t.json: byte 17: unexpected end of file (truncated?)");
}

TEST(ChromeReader, DeepNestingIsBoundedWithoutRecursion) {
  // A million levels would overflow any recursive parser's stack.
  std::string json = R"([{"ph":"X","args":{"a":)";
  const size_t first_bracket = json.size();
  json += std::string(1'000'000, '[');
  ImportOptions options;
  options.max_depth = 128;
  // The event's args object is at depth 4; the 124th '[' reaches depth 128.
  EXPECT_EQ(error_of(json, options), "t.json: byte " + std::to_string(first_bracket + 124) +
                                         ": nesting deeper than 128 levels");
}

TEST(ChromeReader, AnEventLargerThanTheLimitIsAnError) {
  ImportOptions options;
  options.max_event_bytes = 1 << 20;
  const std::string json = "[{\"name\":\"" + std::string(3 << 20, 'a') + "\"}]";
  EXPECT_EQ(error_of(json, options),
            "t.json: byte 1: a trace event larger than 1048576 bytes "
            "(ImportOptions::max_event_bytes)");
}

TEST(ChromeReader, LongWhitespaceRunsNeedNoBuffer) {
  ImportOptions options;
  options.max_event_bytes = 1 << 20;
  const std::string json =
      "[" + std::string(5 << 20, ' ') + "{\"ph\":\"X\"}" + std::string(3 << 20, '\n') + "]";
  auto source = open_memory_source(json);
  RecordingSink sink;
  ImportReport report;
  read_chrome_json(*source, "t.json", options, sink, report);
  EXPECT_EQ(sink.seen.events.size(), 1u);
}

}  // namespace
}  // namespace meshscope::traces::importer
