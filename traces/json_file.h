// Reading a JSON file a person wrote (a config, a hardware entry, a framework profile, a
// calibration): every error names the file and where in it the fault is.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace meshscope::traces {

// How deep a hand-written file may nest. Every file meshscope reads this way nests 4 levels or
// fewer; the bound turns a hostile file (20,000 '[' in a row) into an error before the parser,
// the sweep or json::dump recurse into it.
inline constexpr int kMaxJsonFileDepth = 16;

// Reads and parses the JSON file at `path`, a `kind` ("hardware file", "calibration file") as the
// errors call it. Throws std::runtime_error beginning "PATH: " when:
//   - it is a directory ("is a directory, not a KIND"), cannot be opened ("cannot open KIND:
//     why", a FIFO no process writes to among the whys: traces/input_file.h) or holds more than
//     64 MiB ("has more than the 64 MiB a KIND may have");
//   - it is gzip-compressed or an SQLite database, as a trace may be ("is gzip-compressed, not a
//     KIND ...");
//   - it nests deeper than `max_depth` ("key 'a.b': nested deeper than 16 levels at byte N");
//   - an object gives a key twice ("key 'mesh' given twice (bytes N and M)"; the same key written
//     with different escapes, "\u006e" and "n", without the bytes): a parser would keep one of
//     the two silently;
//   - a number is beyond a double's range ("number '1e999' out of range at byte N");
//   - the text is not JSON ("malformed JSON at byte N (line L, column C): what the parser
//     expected").
// Bytes are counted from 0, lines and columns from 1.
nlohmann::json load_json_file(const std::string& path, std::string_view kind = "JSON file",
                              int max_depth = kMaxJsonFileDepth);

// The same checks on text already in memory; errors begin "WHERE: " (the file it came from).
// Malformed input of any kind is a std::runtime_error, never another exception or a crash (the
// fuzz target fuzz/fuzz_json_file.cpp holds it to that).
nlohmann::json parse_json_text(const std::string& text, const std::string& where,
                               int max_depth = kMaxJsonFileDepth);

// Refuses a key of the object `j` that `known` does not list: a misspelt key would otherwise leave
// its figure at the default without a word. Throws "WHERE: key 'PREFIXk': unknown key (known: a,
// b, ...)"; `prefix` is the object's dotted name with its dot ("efficiency."), "" at the top. A
// `j` that is no object is refused as "key 'PREFIX': must be an object".
void require_known_keys(const nlohmann::json& j, const std::vector<std::string_view>& known,
                        const std::string& where, const std::string& prefix);

// "line L, column C" of byte offset `byte` in `text` (both from 1; a byte past the end is placed
// after the last character).
std::string line_and_column(const std::string& text, size_t byte);

}  // namespace meshscope::traces
