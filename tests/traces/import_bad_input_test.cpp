// Hostile and broken input, one class per test: each gives a one-line error naming the file and
// the byte (or, for defects real profilers emit, a counted warning with the event skipped), and
// never a crash, a hang or unbounded memory.
#include <gtest/gtest.h>

#include <string>

#include "tests/traces/import_test_util.h"
#include "traces/import/load_trace.h"

namespace meshscope::traces {
namespace {

using testing::gzip_bytes;
using testing::TempFile;
using testing::trace_of;

std::string error_of(std::string_view bytes, const ImportOptions& options = {}) {
  try {
    load_trace_bytes(bytes, "bad.json", options);
  } catch (const ImportError& e) {
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one line";
    return e.what();
  }
  return "no error";
}

const std::string kGood = R"({"ph":"X","cat":"kernel","name":"ok","pid":0,"tid":7,"ts":1,"dur":1})";

TEST(ImportBadInput, TruncatedJsonNamesTheEndOfTheData) {
  const std::string json = trace_of({kGood, kGood});
  const std::string cut = json.substr(0, json.size() - 20);
  EXPECT_EQ(error_of(cut), "bad.json: byte " + std::to_string(cut.size()) +
                               ": unexpected end of file inside the trace event that starts at "
                               "byte " +
                               std::to_string(json.find(kGood, 20)) + " (truncated?)");
}

// A top-level key given twice is not the reader's to resolve: two traceEvents arrays had been
// read as one trace, and of two distributedInfo the last was the rank.
TEST(ImportBadInput, ATopLevelKeyGivenTwiceIsNamed) {
  const std::string events = trace_of({kGood});  // {"traceEvents":[...]}
  const std::string body = events.substr(1, events.size() - 2);
  EXPECT_EQ(error_of("{" + body + "," + body + "}"),
            "bad.json: byte " + std::to_string(body.size() + 2 + 14) +
                ": key 'traceEvents' given twice (bytes 1 and " + std::to_string(body.size() + 2) +
                ")");
  const std::string info = R"("distributedInfo": {"rank": 0, "world_size": 2})";
  EXPECT_NE(error_of("{" + info + "," + info + "," + body + "}")
                .find("key 'distributedInfo' given twice (bytes 1 and "),
            std::string::npos);
  // A member read again once more input came (a 1 MiB one crosses the reader's 256 KiB chunks)
  // is the same member.
  const std::string pad = "\"pad\": \"" + std::string(1 << 20, 'x') + "\"";
  EXPECT_EQ(error_of("{" + pad + "," + info + "," + body + "}"), "no error");
}

TEST(ImportBadInput, TruncatedAndCorruptGzip) {
  const std::string gz = gzip_bytes(trace_of({kGood, kGood, kGood}));
  // The offset is the inflated data's; the message also says where the compressed file ended.
  EXPECT_NE(error_of(gz.substr(0, gz.size() / 2))
                .find("gzip data truncated: the file ends at byte " +
                      std::to_string(gz.size() / 2) + " inside a compressed member"),
            std::string::npos);
  std::string corrupt = gz;
  corrupt[12] = static_cast<char>(~corrupt[12]);
  corrupt[13] = static_cast<char>(~corrupt[13]);
  EXPECT_NE(error_of(corrupt).find("bad.json: byte "), std::string::npos);
  // gzip by its bytes, whatever the name: the offset is of the inflated data, and says so.
  EXPECT_EQ(error_of(gz + "garbage"), "bad.json: byte " +
                                          std::to_string(trace_of({kGood, kGood, kGood}).size()) +
                                          " of the decompressed data: trailing garbage after gzip "
                                          "data");
}

TEST(ImportBadInput, GzipBombStopsAtTheRatioCap) {
  // 1 GiB of spaces inside a valid array compresses about 1000:1; stop well before the end.
  const std::string bomb = testing::gzip_repeated("[", ' ', 1024);
  const std::string e = error_of(bomb);
  EXPECT_NE(e.find("250x the compressed size: a gzip bomb?"), std::string::npos) << e;
}

TEST(ImportBadInput, InflatedSizeCap) {
  ImportOptions options;
  options.max_inflated_bytes = 1 << 20;
  const std::string gz = testing::gzip_repeated("[", ' ', 4);
  EXPECT_NE(error_of(gz, options).find("inflated data exceeds 1048576 bytes"), std::string::npos);
}

TEST(ImportBadInput, WrongTypesAndMissingFieldsSkipTheEventWithACount) {
  ImportReport report;
  const Timeline t = load_trace_bytes(
      trace_of({kGood, R"({"ph":"X","name":"ts as text","pid":0,"tid":7,"ts":"12","dur":1})",
                R"({"ph":"X","name":"no dur","pid":0,"tid":7,"ts":1})",
                R"({"ph":"X","name":"no pid","tid":7,"ts":1,"dur":1})",
                R"({"ph":7,"name":"ph number"})", R"({"name":"no ph"})",
                R"({"ph":"X","name":"dur object","pid":0,"tid":7,"ts":1,"dur":{}})"}),
      "types.json", {}, &report);
  EXPECT_EQ(t.spans.size(), 1u);
  EXPECT_EQ(report.count(ImportWarning::kWrongType), 3u);     // ts text, ph number, dur object
  EXPECT_EQ(report.count(ImportWarning::kMissingField), 3u);  // dur, pid, ph
  EXPECT_EQ(report.lines().front().rfind("3 events missing a required field skipped", 0), 0u);
}

TEST(ImportBadInput, APidOrTidThatIsNotANumberOrStringIsAWrongTypeNotProcessZero) {
  const std::string bad = R"({"ph":"X","name":"odd ids","pid":{"a":1},"tid":[1],"ts":1,"dur":1})";
  ImportReport report;
  const std::string json = trace_of({kGood, bad});
  const Timeline t = load_trace_bytes(json, "ids.json", {}, &report);
  ASSERT_EQ(t.spans.size(), 1u);  // only the good event; nothing landed on "pid 0 / tid 0"
  EXPECT_EQ(t.span_name(t.spans[0]), "ok");
  EXPECT_EQ(report.count(ImportWarning::kWrongType), 1u);
  EXPECT_NE(report.lines().at(0).find("byte " + std::to_string(json.find(bad))), std::string::npos)
      << report.lines().at(0);
  // Alone in a file, nothing usable is left: an error naming the file.
  const Timeline alone = load_trace_bytes(trace_of({bad}), "alone.json", {}, &report);
  EXPECT_THROW(require_spans(alone, "alone.json", &report), ImportError);
}

TEST(ImportBadInput, ADeviceWhoseEveryEventWasSkippedDoesNotAppear) {
  ImportReport report;
  const Timeline t = load_trace_bytes(
      trace_of({kGood, R"({"ph":"X","cat":"kernel","name":"neg","pid":1,"tid":7,"ts":5,"dur":-1})",
                R"({"ph":"M","name":"process_name","pid":1,"args":{"name":"GPU 1"}})"}),
      "skipped.json", {}, &report);
  EXPECT_EQ(report.count(ImportWarning::kNegativeDuration), 1u);
  ASSERT_EQ(t.devices.size(), 1u) << "the device of pid 1 holds nothing: not a 100% bubble";
  EXPECT_EQ(t.spans.size(), 1u);
  EXPECT_EQ(t.spans[0].device, 0);
}

TEST(ImportBadInput, NegativeDurationsAndBadNumbers) {
  ImportReport report;
  const Timeline t = load_trace_bytes(
      trace_of({kGood, R"({"ph":"X","name":"neg","pid":0,"tid":7,"ts":5,"dur":-1})",
                R"({"ph":"X","name":"nan","pid":0,"tid":7,"ts":NaN,"dur":1})",
                R"({"ph":"X","name":"inf","pid":0,"tid":7,"ts":1,"dur":Infinity})",
                R"({"ph":"X","name":"huge","pid":0,"tid":7,"ts":1e300,"dur":1})",
                R"({"ph":"X","name":"overflow","pid":0,"tid":7,"ts":9223372036854000,"dur":9e9})",
                R"({"ph":"B","name":"b","pid":0,"tid":7,"ts":10})",
                R"({"ph":"E","pid":0,"tid":7,"ts":9})"}),
      "numbers.json", {}, &report);
  EXPECT_EQ(t.spans.size(), 1u);
  EXPECT_EQ(report.count(ImportWarning::kNegativeDuration), 2u);  // dur -1 and E before B
  EXPECT_EQ(report.count(ImportWarning::kBadNumber), 4u);
}

TEST(ImportBadInput, TimesFarApartAreRefusedBeforeTheyOverflow) {
  // Each time alone fits int64 ns, but the 18e18 ns between them would not: every duration,
  // window and offset computed from them would wrap (a negative step time, a viewer that asked
  // for exabytes). Times beyond ±(2^62 - 1) ns are skipped as bad numbers.
  ImportReport report;
  const Timeline t = load_trace_bytes(
      trace_of({R"({"ph":"X","name":"early","pid":0,"tid":7,"ts":-9000000000000000,"dur":1})",
                R"({"ph":"X","name":"late","pid":0,"tid":7,"ts":9000000000000000,"dur":1})",
                R"({"ph":"X","name":"ends late","pid":0,"tid":7,"ts":4611686018427387,"dur":1})",
                R"({"ph":"X","name":"kept","pid":0,"tid":7,"ts":4611686018427386,"dur":0.5})",
                R"({"ph":"X","name":"kept too","pid":0,"tid":7,"ts":-4611686018427387,"dur":1})",
                R"({"ph":"C","name":"mem","pid":0,"ts":-9000000000000000,"args":{"v":1}})"},
               R"("baseTimeNanoseconds": 9000000000000000000)"),
      "far.json", {}, &report);
  ASSERT_EQ(t.spans.size(), 2u);
  EXPECT_EQ(report.count(ImportWarning::kBadNumber), 5u);  // 3 spans, the counter, the base time
  EXPECT_EQ(t.metadata.count("base_time_ns"), 0u);
  // What is kept is as far apart as the importer allows, and its arithmetic holds.
  const StepWindow e = t.extent();
  EXPECT_EQ(e.begin_ns, -4611686018427387000);
  EXPECT_EQ(e.end_ns, 4611686018427386500);
  EXPECT_EQ(e.end_ns - e.begin_ns, 9223372036854773500);  // just below 2^63: no wrap
}

TEST(ImportBadInput, UnpairedAndDanglingFlowsAreCounted) {
  ImportReport report;
  const Timeline t = load_trace_bytes(
      trace_of({kGood, R"({"ph":"s","id":1,"pid":0,"tid":7,"ts":1,"cat":"ac2g","name":"ac2g"})",
                R"({"ph":"f","id":2,"pid":0,"tid":7,"ts":1,"cat":"ac2g","name":"ac2g","bp":"e"})",
                R"({"ph":"s","id":3,"pid":0,"tid":7,"ts":1,"cat":"ac2g","name":"ac2g"})",
                R"({"ph":"f","id":3,"pid":0,"tid":99,"ts":1,"cat":"ac2g","name":"ac2g","bp":"e"})",
                R"({"ph":"B","name":"never closed","pid":0,"tid":7,"ts":1})",
                R"({"ph":"E","pid":5,"tid":5,"ts":1})"}),
      "flows.json", {}, &report);
  EXPECT_TRUE(t.flows.empty());
  EXPECT_EQ(report.count(ImportWarning::kUnpairedFlow), 2u);
  EXPECT_EQ(report.count(ImportWarning::kFlowWithoutSpan), 1u);  // tid 99 has no spans
  EXPECT_EQ(report.count(ImportWarning::kUnmatchedBeginEnd), 2u);
  EXPECT_NE(t.metadata.at("import_warnings").find("2 flow events without a partner skipped"),
            std::string::npos);
}

TEST(ImportBadInput, DeepNestingIsAnErrorNotAStackOverflow) {
  const std::string json = R"({"traceEvents":[{"ph":"X","args":)" + std::string(5'000'000, '[');
  EXPECT_NE(error_of(json).find("nesting deeper than 128 levels"), std::string::npos);
}

TEST(ImportBadInput, InvalidUtf8InAName) {
  const std::string json = "[{\"ph\":\"X\",\"name\":\"k\xFF\"}]";
  EXPECT_EQ(error_of(json), "bad.json: byte 20: invalid UTF-8 in string");
}

TEST(ImportBadInput, NotATrace) {
  EXPECT_EQ(error_of(""), "bad.json: byte 0: empty file: not a trace");
  EXPECT_EQ(error_of("\x7f"
                     "ELF\x02\x01"),
            "bad.json: byte 0: not a Chrome trace: expected '{' or '[' at the start");
  EXPECT_EQ(error_of(R"({"schemaVersion": 1})"),
            "bad.json: not a Chrome trace: the top-level object has no traceEvents");
  EXPECT_EQ(error_of(R"({"traceEvents": {}})"), "bad.json: byte 16: traceEvents is not an array");
  EXPECT_EQ(error_of("[1]"), "bad.json: byte 1: a trace event is not an object");
  EXPECT_EQ(error_of("SQLite format 3" + std::string(1, '\0') + std::string(200, 'x'))
                .rfind("bad.json: SQLite: ", 0),
            0u);
}

TEST(ImportBadInput, UnreadableFiles) {
  try {
    load_trace("/nonexistent/trace.json");
    FAIL() << "no error";
  } catch (const ImportError& e) {
    EXPECT_EQ(std::string(e.what()),
              "/nonexistent/trace.json: cannot open: No such file or directory");
    EXPECT_EQ(e.byte_offset(), -1);
  }
  TempFile folder("_dir");
  std::filesystem::create_directory(folder.path());
  EXPECT_THROW(load_trace(folder.path()), ImportError);
}

TEST(ImportBadInput, TheErrorCarriesItsParts) {
  try {
    load_trace_bytes("[{\"ph\" \"X\"}]", "parts.json");
    FAIL() << "no error";
  } catch (const ImportError& e) {
    EXPECT_EQ(e.file(), "parts.json");
    EXPECT_EQ(e.byte_offset(), 7);
    EXPECT_EQ(e.reason(), "expected ':' after a key");
  }
}

}  // namespace
}  // namespace meshscope::traces
