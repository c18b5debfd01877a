// Reads a Kineto trace's GEMM ops, runtime calls and kernels in one streaming pass
// (chrome_reader.h) and joins them: runtime call -> kernel by correlation id, runtime call -> op by
// the op's interval on the call's thread.
#include "traces/import/trace_gemms.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "traces/import/chrome_args.h"
#include "traces/import/chrome_reader.h"
#include "traces/import/kineto_names.h"

namespace meshscope::traces {
namespace {

using importer::ChromeEvent;
using importer::ChromeMember;
using importer::JsonType;

// The leaf ATen ops that run one GEMM, and where their two matrix operands are in "Input Dims":
// addmm and baddbmm take the addend first.
struct GemmOpKind {
  std::string_view name;
  size_t first_operand;
  bool batched;
};
constexpr GemmOpKind kGemmOps[] = {{"aten::mm", 0, false},
                                   {"aten::addmm", 1, false},
                                   {"aten::bmm", 0, true},
                                   {"aten::baddbmm", 1, true}};

const GemmOpKind* gemm_kind(std::string_view name) {
  for (const GemmOpKind& k : kGemmOps)
    if (k.name == name) return &k;
  return nullptr;
}

// An arg's value parsed as JSON (its raw text holds `"key": value`); discarded when absent.
nlohmann::json arg_json(const ChromeEvent& ev, std::string_view key) {
  for (uint32_t i = 0; i < ev.arg_count; ++i) {
    if (ev.args[i].key != key) continue;
    const std::string_view raw = ev.args[i].raw;
    const size_t colon = raw.find(':', key.size() + 2);
    if (colon == std::string_view::npos) break;
    return nlohmann::json::parse(raw.substr(colon + 1), nullptr, false);
  }
  return nlohmann::json(nlohmann::json::value_t::discarded);
}

// A matrix operand's sizes: [rows, cols] or, batched, [b, rows, cols]; empty if not that.
std::vector<int64_t> sizes(const nlohmann::json& dims, size_t at, bool batched) {
  if (!dims.is_array() || dims.size() <= at || !dims[at].is_array()) return {};
  const nlohmann::json& d = dims[at];
  if (d.size() != (batched ? 3u : 2u)) return {};
  std::vector<int64_t> out;
  for (const nlohmann::json& x : d) {
    if (!x.is_number_integer() || x.get<int64_t>() < 1) return {};
    out.push_back(x.get<int64_t>());
  }
  return out;
}

// Fills g's shape from the op's "Input Dims"; false when they are not two matrices that multiply.
bool read_shape(const GemmOpKind& kind, const nlohmann::json& dims, TraceGemm& g) {
  const std::vector<int64_t> a = sizes(dims, kind.first_operand, kind.batched);
  const std::vector<int64_t> b = sizes(dims, kind.first_operand + 1, kind.batched);
  if (a.empty() || b.empty()) return false;
  const size_t o = kind.batched ? 1 : 0;
  if (a[o + 1] != b[o] || (kind.batched && a[0] != b[0])) return false;
  g.b = kind.batched ? a[0] : 1;
  g.m = a[o];
  g.k = a[o + 1];
  g.n = b[o + 1];
  return true;
}

struct Op {
  double begin_us = 0, end_us = 0;
  size_t gemm = 0;  // index into the result's gemms, or kNoShape
};
constexpr size_t kNoShape = static_cast<size_t>(-1);

struct Launch {
  uint32_t thread = 0;  // GemmSink::thread's id of its pid/tid
  double ts_us = 0;
  int64_t correlation = 0;
};

class GemmSink : public importer::ChromeSink {
 public:
  explicit GemmSink(TraceGemms& out) : out_(out) {}

  void on_event(const ChromeEvent& ev) override {
    if (!ev.cat.is_string() || !ev.ts.is_number()) return;
    using importer::KinetoCategory;
    const KinetoCategory cat = importer::classify_kineto_category(ev.cat.text).category;
    double ts = 0;
    if (!importer::number_text_to_double(ev.ts.text, ts)) return;
    if (cat == KinetoCategory::kKernel) {
      const auto corr = importer::as_int(ev.arg("correlation"));
      double dur = 0;
      if (!corr || !ev.dur.is_number() || !importer::number_text_to_double(ev.dur.text, dur) ||
          dur < 0)
        return;
      Kernels& k = kernels_[*corr];
      k.us += dur;
      ++k.count;
    } else if (cat == KinetoCategory::kRuntime || cat == KinetoCategory::kDriver) {
      const auto corr = importer::as_int(ev.arg("correlation"));
      if (corr) launches_.push_back({thread(ev), ts, *corr});
    } else if (cat == KinetoCategory::kCpuOp && ev.name.is_string()) {
      const GemmOpKind* kind = gemm_kind(ev.name.text);
      double dur = 0;
      if (kind == nullptr || !ev.dur.is_number() ||
          !importer::number_text_to_double(ev.dur.text, dur) || dur < 0)
        return;
      TraceGemm g;
      g.op = std::string(ev.name.text);
      g.offset = ev.offset;
      Op op{ts, ts + dur, kNoShape};
      if (read_shape(*kind, arg_json(ev, "Input Dims"), g)) {
        const nlohmann::json types = arg_json(ev, "Input type");
        if (types.is_array() && types.size() > kind->first_operand &&
            types[kind->first_operand].is_string())
          g.dtype = types[kind->first_operand].get<std::string>();
        op.gemm = shaped_.size();
        shaped_.push_back(std::move(g));
      } else {
        ++out_.without_shapes;
      }
      ops_[thread(ev)].push_back(op);
    }
  }

  void on_member(const ChromeMember& m) override {
    // Kineto writes 1; a hand-made trace may say true.
    if (m.key != "record_shapes") return;
    double v = 0;
    out_.record_shapes =
        m.value.type == JsonType::kTrue ||
        (m.value.is_number() && importer::number_text_to_double(m.value.text, v) && v != 0);
  }

  // Joins what was read into out_.gemms.
  void finish() {
    for (auto& [id, ops] : ops_)
      std::stable_sort(ops.begin(), ops.end(),
                       [](const Op& a, const Op& b) { return a.begin_us < b.begin_us; });
    for (const Launch& l : launches_) {
      const auto k = kernels_.find(l.correlation);
      if (k == kernels_.end()) continue;
      const auto t = ops_.find(l.thread);
      if (t == ops_.end()) continue;
      const Op* op = innermost(t->second, l.ts_us);
      if (op == nullptr || op->gemm == kNoShape) continue;
      shaped_[op->gemm].kernel_s += k->second.us * 1e-6;
      shaped_[op->gemm].kernels += k->second.count;
    }
    for (TraceGemm& g : shaped_) {
      if (g.kernels == 0) {
        ++out_.without_kernels;
        continue;
      }
      out_.gemms.push_back(std::move(g));
    }
  }

 private:
  // A small id for the event's pid/tid, so that each of millions of launches keeps 16 bytes.
  uint32_t thread(const ChromeEvent& ev) {
    std::string key(importer::as_text(ev.pid));
    key += '/';
    key += importer::as_text(ev.tid);
    return threads_.emplace(std::move(key), static_cast<uint32_t>(threads_.size())).first->second;
  }

  // The latest-starting op whose interval holds t (ops sorted by start; nesting is shallow, so a
  // bounded walk back finds an enclosing op).
  static const Op* innermost(const std::vector<Op>& ops, double t) {
    auto it = std::upper_bound(ops.begin(), ops.end(), t,
                               [](double v, const Op& o) { return v < o.begin_us; });
    for (int steps = 0; it != ops.begin() && steps < 64; ++steps) {
      --it;
      if (it->end_us >= t) return &*it;
    }
    return nullptr;
  }

  TraceGemms& out_;
  std::vector<TraceGemm> shaped_;
  std::unordered_map<std::string, uint32_t> threads_;
  std::unordered_map<uint32_t, std::vector<Op>> ops_;
  std::vector<Launch> launches_;
  // The kernels of each correlation id (a graph launch starts several).
  struct Kernels {
    double us = 0;
    int count = 0;
  };
  std::unordered_map<int64_t, Kernels> kernels_;
};

}  // namespace

namespace {

TraceGemms read(const std::filesystem::path& file, const std::string_view* memory,
                const std::string& name, const ImportOptions& options) {
  TraceGemms out;
  out.file = name;
  GemmSink sink(out);
  importer::read_json_trace(file, memory, name, options, sink,
                            "GEMM rates are read from Kineto JSON traces with shapes only");
  sink.finish();
  return out;
}

}  // namespace

TraceGemms read_trace_gemms(const std::filesystem::path& file, const ImportOptions& options) {
  return read(file, nullptr, file.string(), options);
}

TraceGemms read_trace_gemms_bytes(std::string_view bytes, const std::string& name,
                                  const ImportOptions& options) {
  return read(name, &bytes, name, options);
}

}  // namespace meshscope::traces
