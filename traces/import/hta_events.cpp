// A ChromeSink that keeps what HTA's data frame keeps of each event: index, ts, dur, cat, name,
// args.stream, args.correlation; and whether HTA's ts column is floating point.
#include "traces/import/hta_events.h"

#include <cmath>
#include <string>
#include <unordered_map>

#include "traces/import/chrome_reader.h"

namespace meshscope::traces {
namespace {

using importer::ChromeEvent;
using importer::ChromeMember;
using importer::JsonScalar;
using importer::JsonType;

bool is_integer_text(std::string_view s) {
  return s.find_first_of(".eE") == std::string_view::npos;
}

// int(x) as HTA's normalize_gpu_stream_numbers applies it: numbers truncate, numeric strings
// parse, anything else is -1.
int64_t python_int(const JsonScalar* v, int64_t fallback) {
  if (v == nullptr) return fallback;
  if (v->type != JsonType::kNumber && v->type != JsonType::kString) return fallback;
  int64_t i = 0;
  if (importer::number_text_to_int(v->text, i)) return i;
  double d = 0;
  if (v->type == JsonType::kNumber && importer::number_text_to_double(v->text, d) &&
      std::fabs(d) < 9.2e18) {
    return static_cast<int64_t>(d);
  }
  return -1;
}

class HtaEventSink : public importer::ChromeSink {
 public:
  explicit HtaEventSink(HtaEventTable& table) : t_(table) { t_.strings.assign(1, ""); }

  void on_event(const ChromeEvent& ev) override {
    const int64_t index = next_index_++;
    if (ev.ph.is_string() && ev.ph.text == "M" && ev.name.is_string() &&
        ev.name.text == "process_name") {
      if (const JsonScalar* r = ev.arg("rank"); r != nullptr && r->is_number()) {
        int64_t rank = 0;
        if (importer::number_text_to_int(r->text, rank)) t_.process_ranks.insert(rank);
      }
    }
    if (!ev.ts.is_number() || !is_integer_text(ev.ts.text)) t_.float_ts = true;
    if (!ev.dur.present() || !ev.cat.present() || ev.dur.type == JsonType::kNull ||
        ev.cat.type == JsonType::kNull) {
      return;  // HTA: dropna(subset=["dur", "cat"])
    }
    if (ev.cat.is_string() && ev.cat.text == "Trace") return;
    HtaEvent e;
    e.index = index;
    if (!ev.ts.is_number() || !ev.dur.is_number() ||
        !importer::number_text_to_double(ev.ts.text, e.ts_us) ||
        !importer::number_text_to_double(ev.dur.text, e.dur_us)) {
      return;  // HTA would carry a NaN time: no interval
    }
    e.cat = intern(ev.cat.text);
    e.name = ev.name.is_string() ? intern(ev.name.text) : 0;
    e.stream = python_int(ev.arg("stream"), -1);
    e.correlation = python_int(ev.arg("correlation"), -1);
    t_.events.push_back(e);
  }

  void on_member(const ChromeMember& m) override {
    if (m.key == "meshscope_run") {
      if (const JsonScalar* v = m.member("source"); v != nullptr && v->is_string()) {
        t_.meshscope_source = std::string(v->text);
      }
      return;
    }
    if (m.key != "distributedInfo") return;
    t_.distributed_info = true;
    if (const JsonScalar* v = m.member("rank"); v != nullptr && v->is_number()) {
      int64_t r = 0;
      if (importer::number_text_to_int(v->text, r) && r >= 0 && r <= INT32_MAX) {
        t_.rank = static_cast<int>(r);
      }
    }
  }

 private:
  uint32_t intern(std::string_view s) {
    const auto it = ids_.find(std::string(s));
    if (it != ids_.end()) return it->second;
    const auto id = static_cast<uint32_t>(t_.strings.size());
    t_.strings.emplace_back(s);
    ids_.emplace(std::string(s), id);
    return id;
  }

  HtaEventTable& t_;
  int64_t next_index_ = 0;
  std::unordered_map<std::string, uint32_t> ids_;
};

}  // namespace

HtaEventTable read_hta_events(const std::filesystem::path& file, const ImportOptions& options) {
  HtaEventTable table;
  table.file = file.string();
  HtaEventSink sink(table);
  importer::read_json_trace(file, nullptr, table.file, options, sink,
                            "--window hta reads Kineto JSON traces only (HTA does)");
  return table;
}

}  // namespace meshscope::traces
