// Writes the fuzzers' seed corpus: OUT/chrome_json (a synthetic Kineto trace, plain and gzip; GEMM
// ops with shapes; a meshscope export with every span kind, flows, counters and steps; a generic
// B/E array trace),
// OUT/nsys_sqlite (a small Nsight Systems export with the documented tables), OUT/schedule (the
// schedule text of every family meshscope generates, on a small mesh it takes) and
// OUT/json_file/calibration.json (a calibration with every field set).
#include <sqlite3.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "sim/cost/calibration.h"
#include "sim/schedule/families.h"
#include "sim/schedule/generators.h"
#include "sim/schedule/schedule_text.h"
#include "traces/chrome_export.h"
#include "traces/import/kineto_synth.h"

namespace {

namespace fs = std::filesystem;
using namespace meshscope::traces;

void write(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string kineto(int64_t iterations) {
  SyntheticKinetoOptions o;
  o.iterations = iterations;
  o.world_size = 2;
  std::string json;
  write_synthetic_kineto(o, [&](std::string_view s) { json += s; });
  return json;
}

Timeline small_timeline() {
  Timeline t;
  for (int r = 0; r < 2; ++r) {
    const uint16_t d = t.add_device(r, "rank " + std::to_string(r), MeshCoord{0, r, 0});
    t.add_lane(d, "compute", LaneKind::kCompute);
    t.add_lane(d, "comm", LaneKind::kComm);
  }
  uint32_t previous = 0;
  for (int k = 0; k < static_cast<int>(SpanKind::kCount); ++k) {
    Span s;
    s.begin_ns = k * 1000;
    s.end_ns = k * 1000 + 900;
    s.kind = static_cast<SpanKind>(k);
    s.name = t.strings.intern("span " + std::to_string(k) + " \"é\"");
    s.device = static_cast<uint16_t>(k % 2);
    s.lane = static_cast<uint16_t>(is_communication(s.kind) ? 1 : 0);
    s.stage = static_cast<int16_t>(k % 2);
    s.microbatch = k;
    s.phase = static_cast<Phase>(k % static_cast<int>(Phase::kCount));
    s.bytes = k * 4096;
    s.flops = k * 1.5e9;
    const uint32_t i = t.add_span(s);
    if (k > 0) t.add_flow(previous, i);
    previous = i;
  }
  t.counters.push_back({0, std::string(kActivationBytesCounter), {{0, 0}, {500, 1e6}}});
  t.steps.push_back({0, 9000});
  t.metadata = {{"source", "cpu"}, {"schedule", "1f1b"}};
  return t;
}

bool sql(sqlite3* db, const char* text) {
  char* err = nullptr;
  if (sqlite3_exec(db, text, nullptr, nullptr, &err) == SQLITE_OK) return true;
  std::fprintf(stderr, "fuzz_seeds: %s\n", err);
  sqlite3_free(err);
  return false;
}

bool nsys_seed(const fs::path& path) {
  fs::remove(path);
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) return false;
  const bool ok = sql(db, R"sql(
    PRAGMA page_size = 512; PRAGMA journal_mode = OFF;
    CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
      deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
      correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,
      shortName INTEGER NOT NULL);
    CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,
      deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
      correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL);
    CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL,
      deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
      correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL);
    CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
      eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER,
      nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL);
    CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
      text TEXT, globalTid INTEGER, textId INTEGER);
    CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);
    CREATE TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE (start INTEGER NOT NULL, end INTEGER NOT NULL,
      deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
      correlationId INTEGER, globalPid INTEGER, graphId INTEGER NOT NULL);
    CREATE TABLE CUDA_UM_GPU_PAGE_FAULT_EVENTS (start INTEGER, globalPid INTEGER,
      deviceId INTEGER);
    CREATE TABLE ENUM_NSYS_EVENT_TYPE (id INTEGER PRIMARY KEY, name TEXT, label TEXT);
    INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES (34, 'NvtxMark', 'NvtxMark'),
      (70, 'NvtxtPushPopRange', 'NvtxtPushPopRange'), (80, 'Other', 'Other');
    INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE VALUES
      (1000, 1400, 0, 1, 7, 2, 72057663025725440, 5), (0, 0, 0, 1, 7, 3, 72057663025725440, 5),
      (1500, 1600, 2147483647, 1, 7, 4, 72057663025725440, 6);
    INSERT INTO CUDA_UM_GPU_PAGE_FAULT_EVENTS VALUES (10, 72057663025725440, 0);
    INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel'), (2, 'gemm'),
      (3, 'ncclDevKernel_SendRecv(x)'), (4, 'step'), (5, 'main');
    INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES
      (100, 200, 0, 72057663025725442, 1, 1, 0), (300, 400, 0, 72057663025725442, 2, 1, 0);
    INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
      (500, 900, 0, 1, 7, 1, 72057663025725440, 2, 2),
      (600, 1900, 0, 1, 13, 2, 72057663025725440, 3, 3),
      (600, 1900, 0, 1, 13, 2, 72057663025725440, 3, 3),
      (700, 800, 0, 2, 7, 1, 72057680205594624, 2, 2);
    INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (950, 990, 0, 1, 7, NULL, NULL, 4096, 8);
    INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (991, 999, 0, 1, 7, NULL, NULL, 0, 64);
    INSERT INTO NVTX_EVENTS VALUES (50, 450, 59, 'ProfilerStep#0', 72057663025725442, NULL),
      (60, 440, 59, NULL, 72057663025725442, 4), (70, 80, 60, 'range', 72057663025725442, NULL),
      (75, NULL, 34, 'mark', 72057663025725442, NULL), (76, 90, 70, 'nvtxt', 72057663025725442, NULL),
      (77, 95, 71, 'nvtxt se', 72057663025725442, NULL), (78, 79, 80, 'other', NULL, NULL);
    INSERT INTO ThreadNames VALUES (5, 0, 72057663025725442);
  )sql");
  sqlite3_close(db);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_seeds OUT_DIR\n");
    return 2;
  }
  const fs::path out = argv[1];
  fs::create_directories(out / "chrome_json");
  fs::create_directories(out / "nsys_sqlite");
  const std::string small = kineto(12);
  write(out / "chrome_json" / "kineto.json", small);
  write(out / "chrome_json" / "meshscope.json", export_chrome_json(small_timeline()));
  write(out / "chrome_json" / "generic_array.json",
        R"([{"ph":"M","name":"process_name","pid":"p","args":{"name":"x"}},)"
        R"({"ph":"B","name":"a","pid":"p","tid":1,"ts":1},{"ph":"E","pid":"p","tid":1,"ts":2},)"
        R"({"ph":"C","name":"mem","pid":"p","ts":1,"args":{"v":1.5}},)"
        R"({"ph":"i","name":"mark","pid":"p","tid":1,"ts":1.5},)");
  // GEMM ops with recorded shapes inside aten::linear, and the kernels their launches started
  // (what `calibrate --gemm-rates` reads of a trace: traces/import/trace_gemms.h).
  write(out / "chrome_json" / "gemms.json",
        R"({"record_shapes":1,"traceEvents":[)"
        R"({"ph":"X","cat":"cpu_op","name":"aten::linear","pid":1,"tid":1,"ts":100,"dur":50,)"
        R"("args":{"Input Dims":[[64,32],[16,32],[16]]}},)"
        R"({"ph":"X","cat":"cpu_op","name":"aten::addmm","pid":1,"tid":1,"ts":105,"dur":30,)"
        R"("args":{"Input Dims":[[16],[64,32],[32,16],[],[]],)"
        R"("Input type":["c10::BFloat16","c10::BFloat16","c10::BFloat16","Scalar","Scalar"]}},)"
        R"({"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":110,)"
        R"("dur":4,"args":{"correlation":21}},)"
        R"({"ph":"X","cat":"cpu_op","name":"aten::bmm","pid":1,"tid":1,"ts":200,"dur":10,)"
        R"("args":{"Input Dims":[[4,8,16],[4,16,32]],"Input type":["c10::Half","c10::Half"]}},)"
        R"({"ph":"X","cat":"cuda_runtime","name":"cuLaunchKernel","pid":1,"tid":1,"ts":205,)"
        R"("dur":1,"args":{"correlation":22}},)"
        R"({"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":300,"dur":8,)"
        R"("args":{"correlation":21}},)"
        R"({"ph":"X","cat":"kernel","name":"bmm","pid":0,"tid":7,"ts":310,"dur":5,)"
        R"("args":{"correlation":22}}]})");
  // gzip through the library's own reader is tested elsewhere; here a real .gz of the trace.
  const std::string gz_path = (out / "chrome_json" / "kineto.json.gz").string();
  const std::string cmd =
      "gzip -c '" + (out / "chrome_json" / "kineto.json").string() + "' > '" + gz_path + "'";
  if (std::system(cmd.c_str()) != 0) fs::remove(gz_path);
  if (!nsys_seed(out / "nsys_sqlite" / "nsys.sqlite")) return 1;
  // Every family on the first small mesh it takes (dp x pp x tp, 4 or 8 microbatches, its
  // default chunks per rank; with dp 2 the collectives too).
  fs::create_directories(out / "schedule");
  namespace schedule = meshscope::schedule;
  for (size_t f = 0; f < schedule::kFamilies.size(); ++f) {
    const auto family = static_cast<schedule::Family>(f);
    const schedule::FamilyInfo& info = schedule::info(family);
    for (const meshscope::mesh::MeshShape mesh :
         {meshscope::mesh::MeshShape{2, 2, 1}, meshscope::mesh::MeshShape{1, 4, 1},
          meshscope::mesh::MeshShape{2, 1, 2}}) {
      schedule::GeneratorConfig g;
      g.family = family;
      g.mesh = mesh;
      g.microbatches = mesh.pp == 4 ? 8 : 4;
      g.virtual_stages = info.default_virtual_stages;
      if (!schedule::family_rule_violation(family, mesh, g.virtual_stages, g.microbatches).empty())
        continue;
      write(out / "schedule" / (std::string(info.name) + ".sched"),
            schedule::dump(schedule::generate(g)));
      break;
    }
  }
  // A calibration as `meshscope calibrate` writes one, every phase and link fitted.
  fs::create_directories(out / "json_file");
  meshscope::cost::Calibration c;
  c.hardware = "cpu-local";
  c.precision = "fp32";
  c.traces = {"run.json"};
  for (meshscope::cost::PhaseFit& f : c.phases)
    f = {.flops_per_s = 5e10,
         .overhead_ns = 2000,
         .efficiency = 0.4,
         .samples = 12,
         .rms_error = 0.05,
         .model_scale = 1.1};
  c.p2p = c.collective = c.all_to_all = {
      .alpha_ns = 9000, .bandwidth_bytes_per_s = 2e9, .samples = 8, .rms_error = 0.1};
  write(out / "json_file" / "calibration.json", meshscope::cost::to_json(c));
  return 0;
}
