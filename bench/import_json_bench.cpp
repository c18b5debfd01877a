// Import speed and memory: meshscope's streaming Chrome/Kineto importer against a plain DOM parse
// (nlohmann::json) of the same synthetic Kineto trace, side by side in one run (and the import with
// origins kept, as `convert` does it). Each benchmark reports bytes/s over the file's (inflated)
// size and peak_rss_MiB, the process's resident-set high-water mark during that benchmark (reset
// through /proc/self/clear_refs before it starts).
//   MESHSCOPE_IMPORT_BENCH_ITERATIONS=N  trace size (default 60000 iterations, about 96 MB)
#include <benchmark/benchmark.h>

#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "traces/import/byte_source.h"
#include "traces/import/chrome_reader.h"
#include "traces/import/kineto_synth.h"
#include "traces/import/load_trace.h"

namespace {

using namespace meshscope::traces;

struct BenchFiles {
  std::filesystem::path json, gz;
  int64_t json_bytes = 0;
};

// Written once per run into the temp folder, removed at exit.
const BenchFiles& files() {
  static const BenchFiles f = [] {
    BenchFiles out;
    const char* env = std::getenv("MESHSCOPE_IMPORT_BENCH_ITERATIONS");
    SyntheticKinetoOptions o;
    o.iterations = env ? std::atoll(env) : 60000;
    const auto dir = std::filesystem::temp_directory_path();
    out.json = dir / ("meshscope_import_bench_" + std::to_string(getpid()) + ".json");
    out.gz = out.json;
    out.gz += ".gz";
    {
      std::ofstream json(out.json, std::ios::binary);
      write_synthetic_kineto(o, [&](std::string_view s) {
        json.write(s.data(), static_cast<std::streamsize>(s.size()));
      });
    }
    out.json_bytes = static_cast<int64_t>(std::filesystem::file_size(out.json));
    const std::string cmd = "gzip -c -6 '" + out.json.string() + "' > '" + out.gz.string() + "'";
    if (std::system(cmd.c_str()) != 0) out.gz.clear();
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove(files().json, ec);
      std::filesystem::remove(files().gz, ec);
    });
    return out;
  }();
  return f;
}

int64_t status_kib(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field, 0) == 0) return std::atoll(line.c_str() + std::strlen(field));
  }
  return 0;
}

void reset_peak_rss() { std::ofstream("/proc/self/clear_refs") << "5"; }

void report(benchmark::State& state, int64_t bytes) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * bytes);
  state.counters["peak_rss_MiB"] = static_cast<double>(status_kib("VmHWM:")) / 1024.0;
  state.counters["file_MB"] = static_cast<double>(bytes) / 1e6;
}

// The whole import: stream, tokenize, build the Timeline (devices, sorting, flows, steps).
void BM_MeshscopeImport(benchmark::State& state) {
  const BenchFiles& f = files();
  reset_peak_rss();
  size_t spans = 0;
  for (auto _ : state) {
    const Timeline t = load_trace(f.json);
    spans = t.spans.size();
    benchmark::DoNotOptimize(spans);
  }
  report(state, f.json_bytes);
  state.counters["spans"] = static_cast<double>(spans);
}

// The import `convert` does: the same with ImportOptions::keep_origins (correlation ids, streams,
// categories and the other args of every event kept for the export).
void BM_MeshscopeImportKeepOrigins(benchmark::State& state) {
  const BenchFiles& f = files();
  ImportOptions o;
  o.keep_origins = true;
  reset_peak_rss();
  size_t args_bytes = 0;
  for (auto _ : state) {
    const Timeline t = load_trace(f.json, o);
    args_bytes = t.origin_args.bytes();
    benchmark::DoNotOptimize(args_bytes);
  }
  report(state, f.json_bytes);
  state.counters["origin_args_MB"] = static_cast<double>(args_bytes) / 1e6;
}

// The same from .json.gz (zlib inflate in the loop); bytes/s is over the inflated size.
void BM_MeshscopeImportGzip(benchmark::State& state) {
  const BenchFiles& f = files();
  if (f.gz.empty()) {
    state.SkipWithError("gzip not available");
    return;
  }
  reset_peak_rss();
  for (auto _ : state) benchmark::DoNotOptimize(load_trace(f.gz).spans.size());
  report(state, f.json_bytes);
}

// Tokenizer only: every event read, nothing kept.
void BM_MeshscopeTokenizeOnly(benchmark::State& state) {
  struct Null : importer::ChromeSink {
    size_t args = 0;
    void on_event(const importer::ChromeEvent& e) override { args += e.arg_count; }
    void on_member(const importer::ChromeMember&) override {}
  };
  const BenchFiles& f = files();
  reset_peak_rss();
  for (auto _ : state) {
    auto source = importer::open_file_source(f.json);
    Null sink;
    ImportReport r;
    importer::read_chrome_json(*source, f.json.string(), ImportOptions{}, sink, r);
    benchmark::DoNotOptimize(sink.args);
  }
  report(state, f.json_bytes);
}

// A plain DOM parse: the file read into memory, then nlohmann::json::parse; no Timeline.
void BM_NlohmannDomParse(benchmark::State& state) {
  const BenchFiles& f = files();
  reset_peak_rss();
  for (auto _ : state) {
    std::ifstream in(f.json, std::ios::binary);
    std::string text(static_cast<size_t>(f.json_bytes), '\0');
    in.read(text.data(), f.json_bytes);
    const nlohmann::json doc = nlohmann::json::parse(text);
    benchmark::DoNotOptimize(doc["traceEvents"].size());
  }
  report(state, f.json_bytes);
}

BENCHMARK(BM_MeshscopeImport)->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(5);
BENCHMARK(BM_MeshscopeImportKeepOrigins)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->Repetitions(5);
BENCHMARK(BM_MeshscopeImportGzip)->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(3);
BENCHMARK(BM_MeshscopeTokenizeOnly)->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(5);
BENCHMARK(BM_NlohmannDomParse)->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(3);

}  // namespace

BENCHMARK_MAIN();
