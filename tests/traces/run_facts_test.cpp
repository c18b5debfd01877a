// The run's cores, GPU board, process-group backend, replicas simulated once and simulate
// configuration are typed facts of RunDescriptor (traces/run_descriptor.h): they survive the
// Chrome export and import and the byte codec, a merge of ranks keeps those its ranks agree on,
// and a file written before they were typed (its metadata strings only) reads the same.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/traces/trace_fixtures.h"
#include "traces/chrome_export.h"
#include "traces/import/load_trace.h"
#include "traces/timeline_codec.h"

namespace meshscope::traces {
namespace {

// A one-device timeline whose run has the typed facts set and no metadata strings at all.
Timeline typed_only() {
  Timeline t;
  testing::add_device(t, 0);
  testing::add(t, 0, 0, SpanKind::kCompute, 0, 100, "F0");
  t.run = testing::rich_run();
  return t;
}

void expect_same_facts(const RunDescriptor& a, const RunDescriptor& b) {
  EXPECT_EQ(a.cores, b.cores);
  EXPECT_EQ(a.gpu, b.gpu);
  EXPECT_EQ(a.process_group_backend, b.process_group_backend);
  EXPECT_EQ(a.replicas_simulated_once, b.replicas_simulated_once);
  EXPECT_EQ(a.sim_config, b.sim_config);
  EXPECT_EQ(a, b);  // and the rest with them
}

TEST(RunFacts, EachSurvivesTheChromeExportAndImport) {
  const Timeline t = typed_only();
  ASSERT_TRUE(t.metadata.empty());
  const std::string json = export_chrome_json(t);
  const nlohmann::json run = nlohmann::json::parse(json).at("meshscope_run");
  EXPECT_EQ(run.at("cores"), 3);
  EXPECT_EQ(run.at("gpu"), t.run.gpu);
  EXPECT_EQ(run.at("process_group_backend"), "nccl");
  EXPECT_EQ(run.at("replicas_simulated_once"), true);
  EXPECT_EQ(run.at("sim_config"), t.run.sim_config);
  const Timeline back = load_trace_bytes(json, "facts.json");
  expect_same_facts(back.run, t.run);
  // Unknown facts come back unknown, not taken from anywhere else.
  Timeline plain = t;
  plain.run.cores = 0;
  plain.run.gpu.clear();
  plain.run.process_group_backend.clear();
  plain.run.replicas_simulated_once = false;
  plain.run.sim_config.clear();
  expect_same_facts(load_trace_bytes(export_chrome_json(plain), "plain.json").run, plain.run);
}

TEST(RunFacts, EachSurvivesTheByteCodec) {
  const Timeline t = typed_only();
  expect_same_facts(decode_timeline(encode_timeline(t)).run, t.run);
}

TEST(RunFacts, AFlagThatIsNoBooleanIsAnErrorNamingTheField) {
  std::string json = export_chrome_json(typed_only());
  const std::string flag = "\"replicas_simulated_once\":true";
  const auto at = json.find(flag);
  ASSERT_NE(at, std::string::npos);
  json.replace(at, flag.size(), "\"replicas_simulated_once\":1");
  try {
    load_trace_bytes(json, "flag.json");
    FAIL() << "accepted replicas_simulated_once: 1";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("flag.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("meshscope_run.replicas_simulated_once: must be true or "
                                         "false"),
              std::string::npos)
        << e.what();
  }
}

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The committed cpu run (tests/fixtures/meshscope_cpu) was written before the facts were typed:
// its "meshscope_run" has none of them, and it recorded no cores.
TEST(RunFacts, TheCommittedCpuRunReadsAsBefore) {
  const Timeline t = load_trace(std::filesystem::path(MESHSCOPE_SOURCE_DIR) /
                                "tests/fixtures/meshscope_cpu/mlp_1f1b_pp2_4steps.json");
  EXPECT_EQ(t.run.source, RunSource::kCpu);
  EXPECT_EQ(t.run.backend, "cpu (2 threads)");
  EXPECT_EQ(t.run.cores, 0);
  EXPECT_EQ(t.run.gpu, "");
  // "backend" there is the display text of meshscope's own run, not a process group's.
  EXPECT_EQ(t.run.process_group_backend, "");
  EXPECT_FALSE(t.run.replicas_simulated_once);
  EXPECT_EQ(t.run.sim_config, "");
  EXPECT_EQ(t.metadata.at("backend"), "cpu (2 threads)");  // the strings stay as they were
}

// An older file says its facts only as metadata strings: they become the typed facts.
TEST(RunFacts, AnOlderFilesMetadataStringsBecomeTheTypedFacts) {
  std::string cpu = read_text(std::filesystem::path(MESHSCOPE_SOURCE_DIR) /
                              "tests/fixtures/meshscope_cpu/mlp_1f1b_pp2_4steps.json");
  const std::string metadata = "\"metadata\":{";
  const auto at = cpu.find(metadata);
  ASSERT_NE(at, std::string::npos);
  cpu.insert(at + metadata.size(), "\"cores\":\"1\",");  // as a run since stop 58 wrote it
  const Timeline run = load_trace_bytes(cpu, "old_run.json");
  EXPECT_EQ(run.run.cores, 1);
  EXPECT_EQ(run.metadata.at("cores"), "1");

  // A simulation (`simulate --out`) with its configuration and its replicas simulated once.
  const std::string sim = R"({"meshscope":{"version":2,"metadata":{"source":"sim",
      "config":"{\"model\":{\"kind\":\"gpt\"}}","backend":"sim",
      "replicas":"simulated once: devices stand for their dp x tp replicas"},"steps":[]},
      "meshscope_run":{"source":"sim","backend":"sim","mesh":{"dp":2,"pp":2,"tp":2}},
      "traceEvents":[]})";
  const Timeline simulated = load_trace_bytes(sim, "old_sim.json");
  EXPECT_EQ(simulated.run.sim_config, R"({"model":{"kind":"gpt"}})");
  EXPECT_TRUE(simulated.run.replicas_simulated_once);
  EXPECT_EQ(simulated.run.process_group_backend, "");  // "sim" is the display text
  EXPECT_EQ(simulated.run.cores, 0);

  // meshscope's export of an imported Kineto trace: its GPU and process-group backend.
  const std::string kineto = R"({"meshscope":{"version":2,"metadata":{"source":"kineto",
      "gpu":"NVIDIA H100 80GB HBM3","backend":"nccl","config":"not a simulation's"},"steps":[]},
      "meshscope_run":{"source":"kineto","backend":""},"traceEvents":[]})";
  const Timeline profiled = load_trace_bytes(kineto, "old_kineto.json");
  EXPECT_EQ(profiled.run.gpu, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(profiled.run.process_group_backend, "nccl");
  EXPECT_EQ(profiled.run.sim_config, "");  // a "config" key of anything but a simulation

  // A merged job's export: each rank's keys behind "rank N."; the facts where its ranks agree.
  const auto merged = [](const std::string& gpu1, const std::string& backend1) {
    return R"({"meshscope":{"version":2,"metadata":{"source":"kineto","ranks":"2",
      "rank 0.gpu":"NVIDIA H100 80GB HBM3","rank 0.backend":"nccl","rank 1.gpu":")" +
           gpu1 + R"(","rank 1.backend":")" + backend1 + R"("},"steps":[]},
      "meshscope_run":{"source":"kineto"},"traceEvents":[]})";
  };
  const Timeline agree = load_trace_bytes(merged("NVIDIA H100 80GB HBM3", "nccl"), "agree.json");
  EXPECT_EQ(agree.run.gpu, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(agree.run.process_group_backend, "nccl");
  const Timeline differ = load_trace_bytes(merged("NVIDIA A100-SXM4-80GB", "gloo"), "differ.json");
  EXPECT_EQ(differ.run.gpu, "");
  EXPECT_EQ(differ.run.process_group_backend, "");
}

// A file that types its facts is read by them alone: a metadata string saying otherwise (a
// display text) changes nothing.
TEST(RunFacts, AFileThatTypesItsFactsIsNotReadFromItsStrings) {
  Timeline t = typed_only();
  t.run.cores = 0;
  t.run.gpu.clear();
  t.metadata = {{"cores", "5"}, {"gpu", "a display text"}};
  const Timeline back = load_trace_bytes(export_chrome_json(t), "typed.json");
  EXPECT_EQ(back.run.cores, 0);
  EXPECT_EQ(back.run.gpu, "");
  EXPECT_EQ(back.metadata, t.metadata);
}

}  // namespace
}  // namespace meshscope::traces
