// `meshscope calibrate --gemm-rates`: a table of measured GEMM rates (what scripts/gpu-check.sh
// measures on a GPU with meshscope-kernel-check --gemm-rates), or a Kineto trace with shapes,
// checked against a catalog entry's GEMM model, on OpenXLA's measured sm_90 table
// (tests/fixtures/xla).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iterator>
#include <regex>
#include <string>

#include "cli_test_util.h"

namespace meshscope::cli_testing {
namespace {

const std::string kBin = std::string(MESHSCOPE_BINARY_DIR) + "/meshscope";
const std::string kTable =
    std::string(MESHSCOPE_SOURCE_DIR) + "/tests/fixtures/xla/h100_bf16_matmul.csv";

TEST(CalibrateCli, MeasuredGemmRatesAreCheckedAgainstTheEntrysModel) {
  Result r = shell(kBin + " calibrate --gemm-rates " + kTable + " --hardware h100-sxm");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("87 shapes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("shape model within 2.16% rms"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fastest: 808.7 TFLOP/s"), std::string::npos) << r.out;

  r = shell(kBin + " calibrate --gemm-rates " + kTable + " --hardware h100-sxm --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["shapes"], 87);
  EXPECT_NEAR(j["scale"].get<double>(), 1.08, 0.01);
  EXPECT_EQ(j["best_k_half"], 144);
  // The README's relative path works from any directory, as --config's do.
  r = shell("cd " + temp_dir("calibrate_cwd").string() + " && " + kBin +
            " calibrate --gemm-rates tests/fixtures/xla/h100_bf16_matmul.csv --hardware h100-sxm");
  EXPECT_EQ(r.status, 0) << r.err;
  // The same rates against another GPU's model fit it far worse: the check tells them apart.
  r = shell(kBin + " calibrate --gemm-rates " + kTable + " --hardware a100-80gb --json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_GT(nlohmann::json::parse(r.out)["rms"].get<double>(), 0.05);
  // A CPU's entry cannot reach a GPU's level: said, not passed off as a fit.
  r = shell(kBin + " calibrate --gemm-rates " + kTable + " --hardware cpu-local");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("these rates are not of cpu-local's kind"), std::string::npos) << r.out;
}

// An imported GPU profile without FLOPs on its kernels or a group's size on its NCCL kernels
// (DeepSeek-V3's, recorded without record_param_comms args) holds nothing calibrate fits from
// traces: refused naming the file and what does take such a profile.
TEST(CalibrateCli, AnImportedProfileSaysWhatItLacksAndWhatReadsIt) {
  const std::string trace =
      std::string(MESHSCOPE_SOURCE_DIR) + "/tests/fixtures/hta/h800_deepseek_v3_rank0.json.gz";
  const fs::path out = temp_dir("calibrate_imported") / "c.json";
  const Result r = shell(kBin + " calibrate " + trace + " --hardware h100-sxm -o " + out.string());
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err.rfind("meshscope: error: " + trace + ": calibrate: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("\"Group size\""), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("use --gemm-rates"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
  // The same trace twice would count its samples twice: refused, whatever its second name.
  const fs::path again = fs::path(trace).parent_path() / "." / fs::path(trace).filename();
  const Result twice =
      shell(kBin + " calibrate " + trace + " " + again.string() + " -o " + out.string());
  EXPECT_EQ(twice.status, 1);
  EXPECT_NE(twice.err.find("given twice"), std::string::npos) << twice.err;
}

// A PyTorch profile's NCCL kernels say their group's size: calibrate fits the collective link
// from them, says that one rank's file times each with its wait for the other rank, and the
// calibration prices a prediction's collectives whatever format the config computes in.
TEST(CalibrateCli, AnImportedProfilesAllReducesCalibrateTheCollectiveLink) {
  const std::string trace =
      std::string(MESHSCOPE_SOURCE_DIR) + "/tests/fixtures/kineto_2rank_a100_nccl_rank0.json.gz";
  const fs::path out = temp_dir("calibrate_nccl") / "c.json";
  const Result r = shell(kBin + " calibrate " + trace + " --hardware a100-80gb -o " + out.string());
  ASSERT_EQ(r.status, 0) << r.err;
  // 15 all-reduces, the 5 of the first of 3 profiler steps left out as warm-up.
  EXPECT_NE(r.out.find("bus bandwidth, 10 spans of groups of 2 ranks"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("warning: 10 of the 10 collective spans were timed without the rest of "
                       "their group"),
            std::string::npos)
      << r.err;
  const nlohmann::json c = nlohmann::json::parse(std::ifstream(out));
  EXPECT_EQ(c.at("collective").at("samples"), 10);
  EXPECT_EQ(c.at("collective").at("group_ranks"), nlohmann::json::array({2, 2}));
  EXPECT_EQ(c.at("collective").at("timed_alone"), 10);
  EXPECT_GT(c.at("collective").at("bandwidth_bytes_per_s").get<double>(), 0);
  EXPECT_EQ(c.at("compute"), nlohmann::json::object());
  // A bf16 config of the same hardware takes it (a fit of links alone names no format), and
  // its all-reduces are priced at the job's rate, not the catalog's.
  const std::string config =
      std::string(MESHSCOPE_SOURCE_DIR) + "/sim/predict/configs/llmfoundry-mpt3b-s4096-8xa100.json";
  const Result catalog = shell(kBin + " predict --config " + config + " --json");
  const Result fitted =
      shell(kBin + " predict --config " + config + " --calibration " + out.string() + " --json");
  ASSERT_EQ(catalog.status, 0) << catalog.err;
  ASSERT_EQ(fitted.status, 0) << fitted.err;
  const auto step = [](const Result& x) {
    return nlohmann::json::parse(x.out).at("step_time_s").get<double>();
  };
  EXPECT_GT(step(fitted), step(catalog));
  // The development set's range describes the catalog's predictions, not a calibrated one: none.
  const auto range_rows = [](const Result& x) {
    return nlohmann::json::parse(x.out).at("range_rows").get<int>();
  };
  EXPECT_GT(range_rows(catalog), 0);
  EXPECT_EQ(range_rows(fitted), 0);
  EXPECT_EQ(nlohmann::json::parse(fitted.out).at("step_time_s_high").get<double>(), step(fitted));
  const Result text =
      shell(kBin + " predict --config " + config + " --calibration " + out.string());
  EXPECT_NE(text.out.find("no range (a..b) with --calibration"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("where 80% of published runs would fall"), std::string::npos) << text.out;
  // A fit of links alone leaves compute to the catalog: said so.
  EXPECT_NE(text.out.find("the calibration fits no compute phase: compute is priced from the "
                          "catalog's figures"),
            std::string::npos)
      << text.out;
  // Fitted on groups of 2, it prices the config's dp group of 8: said to be an extrapolation.
  EXPECT_NE(text.out.find("the calibration's collective fit saw groups of up to 2 ranks and "
                          "prices groups of up to 8 here"),
            std::string::npos)
      << text.out;
  // A folder and a file in it would count that file's samples twice: refused.
  const fs::path job = temp_dir("calibrate_nccl_job");
  fs::copy_file(trace, job / "rank0.json.gz", fs::copy_options::overwrite_existing);
  const Result twice =
      shell(kBin + " calibrate " + job.string() + " " + (job / "rank0.json.gz").string() +
            " --hardware a100-80gb -o " + (job / "c.json").string());
  EXPECT_EQ(twice.status, 1);
  EXPECT_NE(twice.err.find("rank0.json.gz: given twice (" + job.string() + " and "),
            std::string::npos)
      << twice.err;
}

// A cpu run computes in fp32: calibrated as bf16 it is warned of (it had been taken silently,
// and a bf16 config then predicted at fp32 rates); as fp32, the default, it is not.
TEST(CalibrateCli, ACpuRunCalibratedAsAnotherFormatIsWarnedOf) {
  const fs::path dir = temp_dir("calibrate_precision");
  const fs::path trace = dir / "chain.json";
  ASSERT_EQ(
      shell(kBin + " run --model chain --pp 3 --steps 2 --backend cpu --out " + trace.string())
          .status,
      0);
  const std::string said = trace.string() + ": a cpu run computes in fp32, but --precision is bf16";
  const Result bf16 = shell(kBin + " calibrate " + trace.string() + " --precision bf16 -o " +
                            (dir / "bf16.json").string());
  EXPECT_EQ(bf16.status, 0) << bf16.err;
  EXPECT_NE(bf16.err.find(said), std::string::npos) << bf16.err;
  const Result fp32 =
      shell(kBin + " calibrate " + trace.string() + " -o " + (dir / "fp32.json").string());
  EXPECT_EQ(fp32.status, 0) << fp32.err;
  EXPECT_EQ(fp32.err.find("a cpu run computes in fp32"), std::string::npos) << fp32.err;
}

// The simulator's own output holds the rates it was given: calibrate on it, alone or beside a
// measured run, wrote a fit of nothing measured ("rms error 0.0%"). Refused, naming the file, with
// nothing written; a folder holding two runs' traces is refused too (it was read as one run).
TEST(CalibrateCli, ASimulatedTraceOrTwoRunsInOneFolderIsRefused) {
  const fs::path dir = temp_dir("calibrate_simulated");
  const fs::path measured = dir / "run.json", simulated = dir / "sim.json";
  const fs::path replay = dir / "replay.json", out = dir / "c.json";
  ASSERT_EQ(shell(kBin + " run --pp 2 -m 2 --layers 2 --hidden 16 --steps 2 --cores 1 --out " +
                  measured.string() + " --replay-trace " + replay.string())
                .status,
            0);
  const fs::path config = dir / "mlp.json";
  std::ofstream(config) << R"({"model": {"kind": "mlp", "layers": 2, "hidden": 16},
      "mesh": {"pp": 2}, "batch": {"global": 4, "micro": 1}, "cluster": {"gpu": "cpu-local"}})";
  ASSERT_EQ(
      shell(kBin + " simulate --config " + config.string() + " --out " + simulated.string()).status,
      0);
  for (const auto& [file, what] : {std::pair{simulated, std::string("(sim)")},
                                   std::pair{replay, std::string("(a cpu-time replay)")}}) {
    const Result r = shell(kBin + " calibrate " + measured.string() + " " + file.string() + " -o " +
                           out.string());
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.err.find(file.string() + ": a trace the simulator wrote " + what +
                         ", not a measured one"),
              std::string::npos)
        << r.err;
    EXPECT_FALSE(fs::exists(out));
  }
  const fs::path folder = dir / "two_runs";
  fs::create_directories(folder);
  fs::copy_file(measured, folder / "a.json");
  ASSERT_EQ(shell(kBin + " run --pp 2 -m 2 --layers 2 --hidden 32 --steps 2 --out " +
                  (folder / "b.json").string())
                .status,
            0);
  const Result two = shell(kBin + " calibrate " + folder.string() + " -o " + out.string());
  EXPECT_EQ(two.status, 1) << two.err;
  EXPECT_NE(two.err.find("holds the devices of 2 ranks (a whole run's trace): read it alone"),
            std::string::npos)
      << two.err;
  EXPECT_FALSE(fs::exists(out));
  // The measured run alone is fitted.
  EXPECT_EQ(shell(kBin + " calibrate " + measured.string() + " -o " + out.string()).status, 0);
}

// A phase fitted against the op model ("x the op model") is priced by that scale; the rate beside
// it is its spans' FLOPs over their time, in the steps after the first. It was the slope of span
// time against FLOPs, which where the spans' FLOPs differ only by the loss's few percent is the
// noise's (44 and 19 GFLOP/s for two runs of one shape).
TEST(CalibrateCli, AModelFittedPhasesRateIsItsSpansFlopsOverTheirTime) {
  const std::string run =
      std::string(MESHSCOPE_SOURCE_DIR) + "/tests/fixtures/meshscope_cpu/mlp_1f1b_pp2_4steps.json";
  const fs::path out = temp_dir("calibrate_mean_rate") / "c.json";
  const Result r = shell(kBin + " calibrate " + run + " -o " + out.string());
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json trace = nlohmann::json::parse(read_file(run));
  const nlohmann::json calibration = nlohmann::json::parse(read_file(out));
  const nlohmann::json& steps = trace.at("meshscope").at("steps");
  for (const std::string phase : {"forward", "backward"}) {
    double flops = 0, ns = 0;
    for (const auto& e : trace.at("traceEvents")) {
      if (e.value("ph", "") != "X" || !e.contains("args")) continue;
      const auto& args = e.at("args");
      if (args.value("phase", "") != phase || !args.contains("flops")) continue;
      const auto begin = std::llround(e.at("ts").get<double>() * 1000);
      const auto end = std::llround((e.at("ts").get<double>() + e.at("dur").get<double>()) * 1000);
      for (size_t k = 1; k < steps.size(); ++k)  // the first step is warm-up, left out
        if (begin >= steps[k].at("begin_ns").get<int64_t>() &&
            end <= steps[k].at("end_ns").get<int64_t>()) {
          flops += args.at("flops").get<double>();
          ns += static_cast<double>(end - begin);
        }
    }
    const auto& fit = calibration.at("compute").at(phase);
    EXPECT_GT(fit.at("model_scale").get<double>(), 0) << phase;
    EXPECT_NEAR(fit.at("flops_per_s").get<double>(), flops / (ns * 1e-9), 1e-6 * flops / ns * 1e9)
        << phase;
  }
  // The file says what it was fitted on, and when.
  ASSERT_EQ(calibration.at("fitted_on").size(), 1u);
  const std::string on = calibration.at("fitted_on").at(0).get<std::string>();
  EXPECT_EQ(on.rfind(run + ": meshscope run on cpu", 0), 0u) << on;
  EXPECT_NE(on.find(", mlp layers="), std::string::npos) << on;
  EXPECT_NE(on.find(", 1f1b on dp=1 pp=2 tp=1, "), std::string::npos) << on;
  EXPECT_NE(on.find(", 4 steps, 2 devices"), std::string::npos) << on;
  EXPECT_TRUE(std::regex_match(calibration.at("created").get<std::string>(),
                               std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")))
      << calibration.at("created");
}

// One microbatch through two stages for two steps: each phase and the transfers are fitted from
// two spans (the first step left out), which a line fits exactly ("rms error 0.0%"): said.
TEST(CalibrateCli, AFitFromFewerThanThreeSpansIsWarnedOf) {
  const fs::path dir = temp_dir("calibrate_few");
  const fs::path run = dir / "run.json", out = dir / "c.json";
  ASSERT_EQ(shell(kBin + " run --pp 2 -m 1 --layers 2 --hidden 16 --steps 2 --out " + run.string())
                .status,
            0);
  Result r = shell(kBin + " calibrate " + run.string() + " -o " + out.string());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("meshscope: warning: fitted from fewer than 3 spans: forward (2), backward "
                       "(2), optimizer (2), p2p (2); a line through so few fits them"),
            std::string::npos)
      << r.err;
  ASSERT_EQ(shell(kBin + " run --pp 2 -m 4 --layers 2 --hidden 16 --steps 3 --out " + run.string())
                .status,
            0);
  r = shell(kBin + " calibrate " + run.string() + " -o " + out.string());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.find("fewer than 3 spans"), std::string::npos) << r.err;
}

TEST(CalibrateCli, ComparedRatesStandBesideTheModelWithTheFirstTablesFit) {
  Result r = shell(kBin + " calibrate --gemm-rates " + kTable + " --hardware h100-sxm --json" +
                   " --compare " + kTable);
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const nlohmann::json& c = j["compare"];
  ASSERT_EQ(c["rows"].size(), 87u);
  EXPECT_NEAR(c["rms"].get<double>(), j["rms"].get<double>(), 1e-9);
  const nlohmann::json& first = c["rows"][0];
  EXPECT_EQ(first["shape"], nlohmann::json({1, 1024, 1024, 1024}));
  EXPECT_NEAR(
      first["model_over_measured"].get<double>(),
      first["model_flops_per_s"].get<double>() / first["measured_flops_per_s"].get<double>(),
      1e-12);
  // A model rate that is not the measured one echoed back: the fit leaves 1 to 7% on these rows.
  EXPECT_GT(std::abs(first["model_over_measured"].get<double>() - 1), 0.001);

  r = shell(kBin + " calibrate --gemm-rates " + kTable + " --hardware h100-sxm --compare " +
            kTable);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("87 shapes against the model with that fit, within 2.16% rms"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("b 1, m 1024, n 1024, k 1024: measured 236.3, model 239.4 TFLOP/s"),
            std::string::npos)
      << r.out;

  r = shell(kBin + " calibrate --compare " + kTable + " --hardware h100-sxm");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("--compare requires --gemm-rates"), std::string::npos) << r.err;
  const fs::path bad = temp_dir("calibrate_compare") / "bad.csv";
  std::ofstream(bad) << "b,m,n,k,flops_per_s\n1,1024,0,1024,1e14\n";
  r = shell(kBin + " calibrate --gemm-rates " + kTable + " --hardware h100-sxm --compare " +
            bad.string());
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find(bad.string() + ":2: sizes must be 1 or more"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

// OpenXLA's 87 rates written as a Kineto trace recorded with shapes: each an aten::mm or aten::bmm
// op launching one kernel that lasts the shape's FLOPs over its rate.
fs::path trace_of_table() {
  std::ifstream table(kTable);
  std::string events;
  int n = 0;
  for (std::string line; std::getline(table, line);) {
    if (line.empty() || line[0] == '#' || line[0] == 'b') continue;
    long long b, m, nn, k;
    double rate;
    if (std::sscanf(line.c_str(), "%lld,%lld,%lld,%lld,%lf", &b, &m, &nn, &k, &rate) != 5) continue;
    const double us = 2.0 * b * m * nn * k / rate * 1e6;
    const double ts = 1000.0 * n;
    const std::string dims = b > 1 ? "[[" + std::to_string(b) + "," + std::to_string(m) + "," +
                                         std::to_string(k) + "],[" + std::to_string(b) + "," +
                                         std::to_string(k) + "," + std::to_string(nn) + "]]"
                                   : "[[" + std::to_string(m) + "," + std::to_string(k) + "],[" +
                                         std::to_string(k) + "," + std::to_string(nn) + "]]";
    char ev[1024];
    std::snprintf(ev, sizeof ev,
                  R"(%s{"ph":"X","cat":"cpu_op","name":"%s","pid":1,"tid":1,"ts":%.3f,"dur":20,)"
                  R"("args":{"Input Dims":%s,"Input type":["c10::BFloat16","c10::BFloat16"]}},)"
                  R"({"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,)"
                  R"("ts":%.3f,"dur":5,"args":{"correlation":%d}},)"
                  R"({"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":%.3f,"dur":%.9f,)"
                  R"("args":{"correlation":%d}})",
                  n ? "," : "", b > 1 ? "aten::bmm" : "aten::mm", ts, dims.c_str(), ts + 5, n + 1,
                  ts + 10, us, n + 1);
    events += ev;
    ++n;
  }
  EXPECT_EQ(n, 87);
  const fs::path trace = temp_dir("calibrate_trace") / "gemms.json";
  std::ofstream(trace) << R"({"record_shapes":1,"traceEvents":[)" << events << "]}";
  return trace;
}

// A Kineto trace recorded with shapes in place of the table: the same 87 rates written as aten::mm
// and aten::bmm ops, each launching one kernel that lasts the shape's FLOPs over its rate, give the
// table's own check; a trace recorded without shapes is refused with the reason.
TEST(CalibrateCli, AnImportedTraceIsFittedOnlyToTheKindOfDeviceItRanOn) {
  // distributedInfo.backend: gloo (a torch CPU pipelining job) and nccl (an A100 job).
  const std::string gloo =
      std::string(MESHSCOPE_SOURCE_DIR) + "/tests/fixtures/torch/1F1B/rank0.json.gz";
  const std::string nccl =
      std::string(MESHSCOPE_SOURCE_DIR) + "/tests/fixtures/kineto_2rank_a100_nccl_rank0.json.gz";
  const fs::path out = temp_dir("calibrate_backend") / "c.json";
  Result r = shell(kBin + " calibrate " + gloo + " --hardware h100-sxm -o " + out.string());
  EXPECT_EQ(r.err,
            "meshscope: error: " + gloo +
                ": ran on the gloo backend, but --hardware h100-sxm is a gpu (use --hardware "
                "cpu-local)\n");
  r = shell(kBin + " calibrate " + nccl + " --hardware cpu-local -o " + out.string());
  // The default --hardware is the cpu: the error names the trace's GPU and the catalog's GPUs.
  EXPECT_EQ(r.err, "meshscope: error: " + nccl +
                       ": ran on the nccl backend, but --hardware cpu-local is a cpu (give "
                       "--hardware the entry of its GPU, the trace's \"NVIDIA A100-PG509-200\", "
                       "which no entry describes: the catalog has a100-80gb, b200-sxm, h100-sxm, "
                       "h200-sxm)\n");
  // Without --hardware too: no entry describes the board, so the default stays cpu-local.
  r = shell(kBin + " calibrate " + nccl + " -o " + out.string());
  EXPECT_NE(r.err.find("but --hardware cpu-local is a cpu (give --hardware the entry of its GPU"),
            std::string::npos)
      << r.err;
  // On its own kind the backend is no objection (this job's ops carry no FLOPs to fit).
  r = shell(kBin + " calibrate " + gloo + " --hardware cpu-local -o " + out.string());
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(r.err.find("backend"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
  // A folder is the job's per-rank files, read as one run, as analyze reads it.
  const std::string job = std::string(MESHSCOPE_SOURCE_DIR) + "/tests/fixtures/torch/1F1B";
  r = shell(kBin + " calibrate " + job + " --hardware h100-sxm -o " + out.string());
  EXPECT_EQ(r.err,
            "meshscope: error: " + job +
                ": ran on the gloo backend, but --hardware h100-sxm is a gpu (use --hardware "
                "cpu-local)\n");
  // A folder whose ranks ran on both kinds of device fits neither, whichever rank comes first:
  // its files are of two jobs (since stop 61 refused as such when read, before the fit looks).
  const fs::path mixed = temp_dir("calibrate_mixed_backends");
  fs::copy_file(job + "/rank1.json.gz", mixed / "rank1.json.gz");
  fs::copy_file(nccl, mixed / "rank0.json.gz");
  for (const char* hardware : {"h100-sxm", "cpu-local"}) {
    r = shell(kBin + " calibrate " + mixed.string() + " --hardware " + hardware + " -o " +
              out.string());
    EXPECT_EQ(r.err, "meshscope: error: " + (mixed / "rank1.json.gz").string() +
                         ": world_size 4, where " + (mixed / "rank0.json.gz").string() +
                         " says 2: ranks of different jobs (give one job's files; analyze "
                         "--rank-from file-order sets unrelated traces side by side)\n");
    EXPECT_FALSE(fs::exists(out));
  }
}

// Without --hardware, a trace that names its GPU is fitted to the entry that describes the board
// (cost::hardware_for_board), said on stderr; traces of two boards are refused, naming both.
TEST(CalibrateCli, WithoutHardwareTheEntryOfTheTracesGpuIsFitted) {
  const std::string h100 = std::string(MESHSCOPE_SOURCE_DIR) +
                           "/tests/fixtures/nsys/h100_fuser_report1_schema3.16.sqlite.gz";
  const std::string h200 = std::string(MESHSCOPE_SOURCE_DIR) +
                           "/tests/fixtures/nsys/h200_fuser_report1_schema3.17.sqlite.gz";
  const fs::path out = temp_dir("calibrate_board") / "c.json";
  Result r = shell(kBin + " calibrate " + h100 + " -o " + out.string());
  EXPECT_NE(r.err.find("meshscope: calibrate: --hardware h100-sxm, the catalog entry of the "
                       "traces' GPU \"NVIDIA H100 80GB HBM3\"\n"),
            std::string::npos)
      << r.err;
  // The fit itself has nothing to go on in a fuser benchmark (no microbatch phases, no FLOPs),
  // but it was tried on the GPU's entry, not refused as a GPU trace given the cpu default.
  EXPECT_EQ(r.err.find("is a cpu"), std::string::npos) << r.err;
  r = shell(kBin + " calibrate " + h100 + " " + h200 + " -o " + out.string());
  EXPECT_EQ(r.err, "meshscope: error: " + h200 + ": ran on NVIDIA H200 (h200-sxm), " + h100 +
                       " on NVIDIA H100 80GB HBM3 (h100-sxm): calibrate each board apart, or name "
                       "one with --hardware\n");
  EXPECT_FALSE(fs::exists(out));
  // A board no entry describes beside one that has an entry is another board too (it had been
  // fitted into the other's entry without a word).
  const std::string a100 =
      std::string(MESHSCOPE_SOURCE_DIR) + "/tests/fixtures/kineto_2rank_a100_nccl_rank0.json.gz";
  r = shell(kBin + " calibrate " + h100 + " " + a100 + " -o " + out.string());
  EXPECT_EQ(r.err, "meshscope: error: " + a100 +
                       ": ran on NVIDIA A100-PG509-200 (no catalog entry), " + h100 +
                       " on NVIDIA H100 80GB HBM3 (h100-sxm): calibrate each board apart, or name "
                       "one with --hardware\n");
  EXPECT_FALSE(fs::exists(out));
}

// A fit whose spans scatter by more than their own time predicts little: warned of (every third
// receive of a recorded run made 30 times longer, as a preempted thread's are). A run of one step
// is its warm-up alone: warned of too.
TEST(CalibrateCli, AScatteredFitAndARunOfOneStepAreWarnedOf) {
  const fs::path dir = temp_dir("calibrate_scatter");
  const std::string run =
      std::string(MESHSCOPE_SOURCE_DIR) + "/tests/fixtures/meshscope_cpu/mlp_1f1b_pp2_4steps.json";
  nlohmann::json j = nlohmann::json::parse(read_file(run));
  int recvs = 0;
  for (auto& e : j["traceEvents"])
    if (e.value("ph", "") == "X" && e["args"].value("kind", "") == "recv" && recvs++ % 3 == 0)
      e["dur"] = e["dur"].get<double>() * 30;
  std::ofstream(dir / "scattered.json") << j.dump();
  const Result scattered = shell(kBin + " calibrate " + (dir / "scattered.json").string() + " -o " +
                                 (dir / "s.json").string());
  EXPECT_EQ(scattered.status, 0) << scattered.err;
  EXPECT_NE(scattered.err.find("meshscope: warning: the p2p fit's spans scatter by more than "
                               "their own time (rms error above 100%)"),
            std::string::npos)
      << scattered.err;
  // One payload size: the link's alpha is not measured, and the output says so.
  EXPECT_NE(scattered.out.find("p2p          alpha not separable from the bandwidth (payloads of "
                               "one size, a slope within twice its standard error, or an "
                               "intercept below 0 or past the shortest span: fitted through the "
                               "origin)"),
            std::string::npos)
      << scattered.out;
  const Result recorded = shell(kBin + " calibrate " + run + " -o " + (dir / "r.json").string());
  EXPECT_EQ(recorded.status, 0) << recorded.err;
  EXPECT_EQ(recorded.err.find("scatter"), std::string::npos) << recorded.err;
  EXPECT_EQ(recorded.err.find("one step"), std::string::npos) << recorded.err;

  const fs::path one = dir / "one.json";
  ASSERT_EQ(shell(kBin + " run --model chain --pp 3 --steps 1 --backend cpu --out " + one.string())
                .status,
            0);
  const Result first =
      shell(kBin + " calibrate " + one.string() + " -o " + (dir / "one_cal.json").string());
  EXPECT_EQ(first.status, 0) << first.err;
  EXPECT_NE(first.err.find(one.string() + ": one step, the run's first, whose warm-up"),
            std::string::npos)
      << first.err;
}

// Compute spans without a phase (another tool's kernels with args.flops) price no phase of a
// schedule: with nothing else in the trace, nothing to fit (they had been fitted as phase "none",
// which predict then ignored while saying the calibration replaced the catalog).
TEST(CalibrateCli, ComputeSpansWithoutAPhaseAreNothingToFit) {
  const fs::path dir = temp_dir("calibrate_phaseless");
  std::string events;
  for (int i = 0; i < 20; ++i)
    events += std::string(i ? "," : "") +
              R"({"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":)" +
              std::to_string(i * 20) + R"(,"dur":)" + std::to_string(10 + i) +
              R"(,"args":{"flops":)" + std::to_string(1e9 * (1 + i % 3)) + "}}";
  std::ofstream(dir / "other.json") << R"({"traceEvents":[)" << events << "]}";
  const Result r = shell(kBin + " calibrate " + (dir / "other.json").string() + " -o " +
                         (dir / "c.json").string());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("no compute span with FLOPs and a phase (forward, backward, ...)"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir / "c.json"));
  // Beside a trace that fits, it adds nothing, and is named for that.
  const std::string run =
      std::string(MESHSCOPE_SOURCE_DIR) + "/tests/fixtures/meshscope_cpu/mlp_1f1b_pp2_4steps.json";
  const Result mixed = shell(kBin + " calibrate " + run + " " + (dir / "other.json").string() +
                             " -o " + (dir / "c.json").string());
  EXPECT_EQ(mixed.status, 0) << mixed.err;
  EXPECT_NE(mixed.err.find((dir / "other.json").string() + ": nothing in it to fit"),
            std::string::npos)
      << mixed.err;
  EXPECT_EQ(mixed.err.find(run + ": nothing"), std::string::npos) << mixed.err;
}

// What calibrate refuses to write, a rate past twice the peak, predict refuses to read from a
// file edited by hand (it had priced the phase as good as free).
TEST(CalibrateCli, PredictRefusesACalibratedRatePastTwiceThePeak) {
  const fs::path dir = temp_dir("calibrate_edited_rate");
  const std::string run =
      std::string(MESHSCOPE_SOURCE_DIR) + "/tests/fixtures/meshscope_cpu/mlp_1f1b_pp2_4steps.json";
  ASSERT_EQ(shell(kBin + " calibrate " + run + " -o " + (dir / "c.json").string()).status, 0);
  nlohmann::json c = nlohmann::json::parse(read_file(dir / "c.json"));
  const std::string config =
      std::string(MESHSCOPE_SOURCE_DIR) + "/sim/predict/configs/cpu/A-1f1b-pp2-m8.json";
  EXPECT_EQ(
      shell(kBin + " predict --config " + config + " --calibration " + (dir / "c.json").string())
          .status,
      0);
  c["compute"]["forward"]["flops_per_s"] = 1e15;
  std::ofstream(dir / "edited.json") << c.dump();
  const Result r = shell(kBin + " predict --config " + config + " --calibration " +
                         (dir / "edited.json").string());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("calibration (--calibration): key 'compute.forward.flops_per_s': 1e+06 "
                       "GFLOP/s, "),
            std::string::npos)
      << r.err;
}

// A table of fewer than three shapes fits the two parameters whatever they are: it writes no
// hardware file (one row had been written "within 0.00% rms"), and without one it is warned of.
TEST(CalibrateCli, GemmRatesOfFewerThanThreeShapesWriteNoHardware) {
  const fs::path dir = temp_dir("calibrate_gemm_two");
  const fs::path two = dir / "two.csv", out = dir / "hw.json";
  std::ofstream(two) << "b,m,n,k,flops_per_s\n1,8192,8192,8192,6e14\n1,8192,8192,8192,6.1e14\n"
                        "1,4096,4096,4096,5.5e14\n";
  Result r = shell(kBin + " calibrate --gemm-rates " + two.string() +
                   " --hardware h100-sxm --write-hardware " + out.string());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("two.csv: 2 shapes cannot determine the fit's two parameters"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(out));
  r = shell(kBin + " calibrate --gemm-rates " + two.string() + " --hardware h100-sxm");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("2 shapes: the fit's two parameters are not determined"), std::string::npos)
      << r.out;
  // With a third shape the file is written; the time a kernel adds is not, and it says so.
  std::ofstream(two, std::ios::app) << "1,2048,2048,2048,4.2e14\n";
  r = shell(kBin + " calibrate --gemm-rates " + two.string() + " --hardware h100-sxm " +
            "--write-hardware " + out.string());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::exists(out));
  EXPECT_NE(r.out.find("not written: the fitted "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("predict keeps the entry's launch_overhead_ns (2.00 us"), std::string::npos)
      << r.out;
}

// A run whose every time is a million times too long fits a model_scale of 1.36e6, past what a
// calibration may hold: calibrate had written it (exit 0) and every predict --calibration then
// refused the file. It is refused before anything is written.
TEST(CalibrateCli, AFitPredictWouldRefuseIsNotWritten) {
  const fs::path dir = temp_dir("calibrate_out_of_bounds");
  const std::string run =
      std::string(MESHSCOPE_SOURCE_DIR) + "/tests/fixtures/meshscope_cpu/mlp_1f1b_pp2_4steps.json";
  nlohmann::json t = nlohmann::json::parse(read_file(run));
  for (auto& e : t["traceEvents"]) {
    if (e.contains("ts")) e["ts"] = e["ts"].get<double>() * 1e6;
    if (e.contains("dur")) e["dur"] = e["dur"].get<double>() * 1e6;
  }
  for (auto& w : t["meshscope"]["steps"]) {
    w["begin_ns"] = w["begin_ns"].get<int64_t>() * 1'000'000;
    w["end_ns"] = w["end_ns"].get<int64_t>() * 1'000'000;
  }
  std::ofstream(dir / "slow.json") << t.dump();
  const fs::path out = dir / "c.json";
  const Result r =
      shell(kBin + " calibrate " + (dir / "slow.json").string() + " -o " + out.string());
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("slow.json: the fit: key 'compute.forward.model_scale': must be 0 (not "
                       "fitted) or in [1e-6, 1e6]"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("nothing written"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

// A trace whose run descriptor claims 10^7 layers had calibrate build them (the op model's fit)
// until the kernel killed it at 21.6 GB; the memory a config is refused past is checked first.
TEST(CalibrateCli, AWorkloadPastThisProcesssMemoryIsRefusedBeforeItIsBuilt) {
  std::string text = read_file(std::string(MESHSCOPE_SOURCE_DIR) +
                               "/tests/fixtures/meshscope_cpu/mlp_1f1b_pp2_4steps.json");
  const std::string layers = "\"workload\":{\"kind\":\"mlp\",\"layers\":4,";
  const size_t at = text.find(layers);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, layers.size(), "\"workload\":{\"kind\":\"mlp\",\"layers\":10000000,");
  const fs::path bad = temp_dir("calibrate_huge_workload") / "run.json";
  std::ofstream(bad) << text;
  const fs::path out = bad.parent_path() / "c.json";
  const Result r = shell("MESHSCOPE_MEMORY_LIMIT=8G " + kBin + " calibrate " + bad.string() +
                         " -o " + out.string());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find(bad.string() +
                       ": the run's workload (meshscope_run.workload.layers) cannot be rebuilt: "
                       "building 10000000 layers would take about 95.4 GiB of memory"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(out));
}

// Events the import skipped for bytes that break the format are said, as analyze says them: the
// fit lacks them (calibrate had been silent). What the Timeline leaves out by design is not.
TEST(CalibrateCli, EventsTheImportSkippedAreSaid) {
  std::string text = read_file(std::string(MESHSCOPE_SOURCE_DIR) +
                               "/tests/fixtures/meshscope_cpu/mlp_1f1b_pp2_4steps.json");
  const std::string dur = "\"dur\":6680.725";
  ASSERT_NE(text.find(dur), std::string::npos);
  text.replace(text.find(dur), dur.size(), "\"dur\":\"6680.725\"");
  const fs::path bad = temp_dir("calibrate_skipped") / "run.json";
  std::ofstream(bad) << text;
  const Result r =
      shell(kBin + " calibrate " + bad.string() + " -o " + (bad.parent_path() / "c.json").string());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("meshscope: warning: " + bad.string() +
                       ": 1 event with a field of the wrong type skipped (first at byte "),
            std::string::npos)
      << r.err;
  // A torch job's instant events (no span to draw) are no loss to a replay: not said.
  const Result job = shell(kBin + " predict --from-trace " + std::string(MESHSCOPE_SOURCE_DIR) +
                           "/tests/fixtures/torch/1F1B");
  EXPECT_EQ(job.status, 0) << job.err;
  EXPECT_EQ(job.err.find("warning"), std::string::npos) << job.err;
}

TEST(CalibrateCli, ARateAboveTwiceThePeakIsRefusedAndNothingWritten) {
  // One forward span's FLOPs (of the last step: the first is left out as warm-up) set to 1e300:
  // fitted and written as 1.5e290 times the peak before.
  const std::string run =
      std::string(MESHSCOPE_SOURCE_DIR) + "/tests/fixtures/meshscope_cpu/mlp_1f1b_pp2_4steps.json";
  std::string text = read_file(run);
  const size_t at = text.rfind("\"flops\":134840320");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, std::string("\"flops\":134840320").size(), "\"flops\":1e300");
  const fs::path bad = temp_dir("calibrate_huge_flops") / "run.json";
  std::ofstream(bad) << text;
  const fs::path out = bad.parent_path() / "c.json";
  const Result r = shell(kBin + " calibrate " + bad.string() + " -o " + out.string());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find(bad.string() + ": the forward spans fit "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("times the peak of cpu-local (--hardware): their FLOPs (args.flops) or "
                       "times are wrong"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(out));
  // The run as recorded fits, under the peak.
  EXPECT_EQ(shell(kBin + " calibrate " + run + " -o " + out.string()).status, 0);
  EXPECT_TRUE(fs::exists(out));
}

TEST(CalibrateCli, AKinetoTraceWithShapesGivesItsGemmRates) {
  const fs::path trace = trace_of_table();
  Result from_trace =
      shell(kBin + " calibrate --gemm-rates " + trace.string() + " --hardware h100-sxm --json");
  ASSERT_EQ(from_trace.status, 0) << from_trace.err;
  EXPECT_NE(from_trace.err.find("87 GEMM ops with shapes and kernels, 87 in bf16 or fp16"),
            std::string::npos)
      << from_trace.err;
  const Result from_table =
      shell(kBin + " calibrate --gemm-rates " + kTable + " --hardware h100-sxm --json");
  ASSERT_EQ(from_table.status, 0) << from_table.err;
  const nlohmann::json t = nlohmann::json::parse(from_trace.out);
  const nlohmann::json c = nlohmann::json::parse(from_table.out);
  EXPECT_EQ(t["shapes"], 87);
  EXPECT_NEAR(t["rms"].get<double>(), c["rms"].get<double>(), 1e-6);
  EXPECT_NEAR(t["scale"].get<double>(), c["scale"].get<double>(), 1e-6);
  EXPECT_NEAR(t["best_flops_per_s"].get<double>(), c["best_flops_per_s"].get<double>(), 1e3);

  // Each shape once, with its ops and time, the shape that took the most GEMM time first.
  ASSERT_EQ(t["trace_shapes"].size(), 87u);
  double share = 0;
  for (size_t i = 0; i < 87; ++i) {
    EXPECT_EQ(t["trace_shapes"][i]["ops"], 1);
    share += t["trace_shapes"][i]["share"].get<double>();
    if (i > 0) {
      EXPECT_GE(t["trace_shapes"][i - 1]["kernel_s"].get<double>(),
                t["trace_shapes"][i]["kernel_s"].get<double>());
    }
  }
  EXPECT_NEAR(share, 1, 1e-9);
  EXPECT_FALSE(c.contains("trace_shapes"));  // a table has no ops to count

  // The B200 vLLM trace's four shapes by the time their kernels took (found in its raw JSON with
  // Python, tests/traces/import_trace_gemms_test.cpp): 888 x 640 x 2880 (36 ops, 287.4 us), then
  // 888 x 128 x 2880 (36, 236.2 us), 888 x 2880 x 512 (36, 227.6 us), 1 x 25136 x 2880 (1, 33.5
  // us).
  const std::string b200 = std::string(MESHSCOPE_SOURCE_DIR) +
                           "/tests/fixtures/hta/b200_vllm_tp8_rank0_no_python.json.gz";
  Result r = shell(kBin + " calibrate --gemm-rates " + b200 + " --hardware h100-sxm");
  ASSERT_EQ(r.status, 0) << r.err;
  const size_t first = r.out.find("36 ops, 0.287 ms  b 1, m 888, n 640, k 2880: measured 410.0");
  const size_t last = r.out.find("1 ops, 0.034 ms  b 1, m 1, n 25136, k 2880: measured 4.3");
  EXPECT_NE(first, std::string::npos) << r.out;
  EXPECT_NE(last, std::string::npos) << r.out;
  EXPECT_LT(first, last) << r.out;
  // 36-op shapes of about 8 us a kernel: a scale at its bound, and the fixed time's part named.
  EXPECT_NE(r.out.find("these rates are not of h100-sxm's kind, or the shapes are too small to "
                       "tell the rate from the"),
            std::string::npos)
      << r.out;

  // A folder of a job's rank traces: every trace file in it (other files passed over), each
  // shape's ops and time summed over them; a folder with none is refused.
  const fs::path ranks = temp_dir("calibrate_ranks");
  fs::copy_file(b200, ranks / "rank0.json.gz", fs::copy_options::overwrite_existing);
  fs::copy_file(b200, ranks / "rank1.json.gz", fs::copy_options::overwrite_existing);
  std::ofstream(ranks / "notes.txt") << "not a trace\n";
  r = shell(kBin + " calibrate --gemm-rates " + ranks.string() + " --hardware h100-sxm --json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("rank1.json.gz: 109 GEMM ops"), std::string::npos) << r.err;
  const nlohmann::json both = nlohmann::json::parse(r.out);
  EXPECT_EQ(both["shapes"], 4);
  EXPECT_EQ(both["trace_shapes"][0]["ops"], 72);
  EXPECT_EQ(both["trace_shapes"][3]["ops"], 2);
  r = shell(kBin + " calibrate --gemm-rates " + temp_dir("calibrate_no_ranks").string() +
            " --hardware h100-sxm");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("no trace files (Kineto JSON, or .json.gz) in this folder"),
            std::string::npos)
      << r.err;

  // HolisticTraceAnalysis's A100 trace was recorded without shapes: its aten::mm ops have none.
  const std::string no_shapes =
      std::string(MESHSCOPE_SOURCE_DIR) + "/tests/fixtures/kineto_2rank_a100_nccl_rank0.json.gz";
  r = shell(kBin + " calibrate --gemm-rates " + no_shapes + " --hardware a100-80gb");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("no bf16 or fp16 GEMM"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("profile with record_shapes=True"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

// --json's stdout is the JSON alone, also when the fitted ceiling is written as 1 with a word; a
// shape whose kernels lasted 0 has no rate and is left out, said so, rather than fitted as
// infinite.
TEST(CalibrateCli, TheJsonStandsAloneAndAShapeOfNoTimeIsLeftOut) {
  const fs::path dir = temp_dir("calibrate_alone");
  // OpenXLA's rates 16% faster: a ceiling of about 1.01 of the peak, written as 1.
  std::ifstream table(kTable);
  std::ofstream faster(dir / "faster.csv");
  for (std::string line; std::getline(table, line);) {
    long long b, m, n, k;
    double rate;
    if (std::sscanf(line.c_str(), "%lld,%lld,%lld,%lld,%lf", &b, &m, &n, &k, &rate) == 5) {
      faster << b << ',' << m << ',' << n << ',' << k << ',' << rate * 1.16 << '\n';
    } else {
      faster << line << '\n';
    }
  }
  faster.close();
  Result r = shell(kBin + " calibrate --gemm-rates " + (dir / "faster.csv").string() +
                   " --hardware h100-sxm --json --write-hardware " + (dir / "hw.json").string());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("is written as 1"), std::string::npos) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["written_hardware"], (dir / "hw.json").string());

  // The first shape's one kernel with a duration of 0.
  std::ifstream in(trace_of_table());
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::regex first_kernel(R"re("dur":[0-9]+\.[0-9]{9},"args":\{"correlation":1\}\})re");
  ASSERT_TRUE(std::regex_search(text, first_kernel));
  std::ofstream(dir / "zero.json")
      << std::regex_replace(text, first_kernel, R"("dur":0,"args":{"correlation":1}})",
                            std::regex_constants::format_first_only);
  r = shell(kBin + " calibrate --gemm-rates " + (dir / "zero.json").string() +
            " --hardware h100-sxm --json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("1 GEMM ops left out: their shape's kernels lasted 0"), std::string::npos)
      << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["shapes"], 86);
  EXPECT_TRUE(j["rms"].is_number()) << j["rms"];
  EXPECT_TRUE(j["best_flops_per_s"].is_number()) << j["best_flops_per_s"];
}

// --write-hardware: the entry with its GEMM ceiling scaled by the fit, which predict then reads as
// `cluster.gpu`. A table's rates were bursts, so the entry's sustained share stays; a trace's were
// taken inside a run, so it becomes 1. Rates of another kind of GPU write nothing.
TEST(CalibrateCli, TheFitIsWrittenAsAHardwareFileThatPredictReads) {
  const fs::path dir = temp_dir("calibrate_write");
  const nlohmann::json entry = nlohmann::json::parse(
      std::ifstream(std::string(MESHSCOPE_SOURCE_DIR) + "/sim/cost/catalog/h100-sxm.json"));
  const double gemm_max = entry["efficiency"]["gemm_max"].get<double>();
  const double sustained = entry["efficiency"]["sustained"].get<double>();
  auto written = [&](const std::string& input, const std::string& name, double* scale) {
    const fs::path out = dir / name;
    const Result r = shell(kBin + " calibrate --gemm-rates " + input +
                           " --hardware h100-sxm --json --write-hardware " + out.string());
    EXPECT_EQ(r.status, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["written_hardware"], out.string());
    *scale = j["scale"].get<double>();
    return nlohmann::json::parse(std::ifstream(out));
  };
  double scale = 0;
  const nlohmann::json from_table = written(kTable, "from_table.json", &scale);
  EXPECT_EQ(from_table["name"], "h100-sxm-calibrated");
  EXPECT_NEAR(from_table["efficiency"]["gemm_max"].get<double>(), gemm_max * scale, 1e-12);
  EXPECT_EQ(from_table["efficiency"]["sustained"].get<double>(), sustained);
  // One source line for the ceiling, the calibration's, naming its command and input; the entry's
  // other lines kept.
  int ceiling_lines = 0;
  for (const nlohmann::json& line : from_table["sources"])
    ceiling_lines += line.get<std::string>().starts_with("efficiency.gemm_max");
  EXPECT_EQ(ceiling_lines, 1);
  const std::string first = from_table["sources"][0].get<std::string>();
  EXPECT_NE(first.find("calibrated"), std::string::npos) << first;
  EXPECT_NE(first.find("meshscope calibrate --gemm-rates " + kTable), std::string::npos) << first;
  EXPECT_EQ(from_table["sources"].size(), entry["sources"].size());

  const nlohmann::json from_trace = written(trace_of_table().string(), "from_trace.json", &scale);
  EXPECT_NEAR(from_trace["efficiency"]["gemm_max"].get<double>(), gemm_max * scale, 1e-9);
  EXPECT_EQ(from_trace["efficiency"]["sustained"].get<double>(), 1.0);

  // predict reads each: the same run on a faster GEMM ceiling, and faster still when the rates
  // also stand for the sustained rate.
  const nlohmann::json config = nlohmann::json::parse(std::ifstream(
      std::string(MESHSCOPE_SOURCE_DIR) + "/sim/predict/configs/nemo-gpt3-175b-128xh100.json"));
  auto step = [&](const std::string& gpu) {
    nlohmann::json c = config;
    c["cluster"]["gpu"] = gpu;
    const fs::path path =
        dir / ("config_" + std::to_string(std::hash<std::string>{}(gpu)) + ".json");
    std::ofstream(path) << c.dump();
    const Result r = shell(kBin + " predict --json --config " + path.string());
    EXPECT_EQ(r.status, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["hardware"], gpu == "h100-sxm" ? "h100-sxm" : "h100-sxm-calibrated");
    return j["step_time_s"].get<double>();
  };
  const double catalog = step("h100-sxm");
  const double table = step((dir / "from_table.json").string());
  const double trace = step((dir / "from_trace.json").string());
  EXPECT_LT(table, catalog);
  EXPECT_LT(trace, table);

  const fs::path refused = dir / "b200.json";
  const Result r = shell(kBin + " calibrate --gemm-rates " + std::string(MESHSCOPE_SOURCE_DIR) +
                         "/tests/fixtures/hta/b200_vllm_tp8_rank0_no_python.json.gz --hardware "
                         "h100-sxm --write-hardware " +
                         refused.string());
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("not of its kind, or its shapes are too small to tell the rate from the "
                       "time each kernel adds): no hardware file written"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(refused));
}

// --fp8: FP8 rates (meshscope-kernel-check --gemm-rates --fp8 writes them; TileLang's sweep,
// tests/fixtures/tilelang, which the entry's FP8 figures were fitted to) against the entry's FP8
// GEMM model, and its FP8 ceiling written, which an FP8 config reads (docs/ACCURACY.md item 51).
TEST(CalibrateCli, Fp8RatesAreSetBesideTheFp8ModelAndWrittenAsItsCeiling) {
  const std::string fp8 =
      std::string(MESHSCOPE_SOURCE_DIR) + "/tests/fixtures/tilelang/h800_fp8_matmul.csv";
  Result r = shell(kBin + " calibrate --gemm-rates " + fp8 + " --hardware h100-sxm --fp8");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("FP8 GEMM rates: 7 shapes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("of the entry's FP8 peak"), std::string::npos) << r.out;
  const fs::path out = temp_dir("calibrate_fp8") / "h100-fp8.json";
  r = shell(kBin + " calibrate --gemm-rates " + fp8 + " --hardware h100-sxm --fp8 --json " +
            "--write-hardware " + out.string());
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["fp8"].get<bool>());
  EXPECT_NEAR(j["scale"].get<double>(), 1.0, 0.01);  // the figures are these rows' fit
  EXPECT_LT(j["rms"].get<double>(), 0.016);
  const nlohmann::json entry = nlohmann::json::parse(
      std::ifstream(std::string(MESHSCOPE_SOURCE_DIR) + "/sim/cost/catalog/h100-sxm.json"));
  const nlohmann::json written = nlohmann::json::parse(std::ifstream(out));
  EXPECT_NEAR(written["efficiency"]["gemm_fp8_max"].get<double>(),
              entry["efficiency"]["gemm_fp8_max"].get<double>() * j["scale"].get<double>(), 1e-9);
  EXPECT_EQ(written["efficiency"]["gemm_max"], entry["efficiency"]["gemm_max"]);  // bf16's kept
  EXPECT_TRUE(written["sources"][0].get<std::string>().starts_with("efficiency.gemm_fp8_max"));
  // The same rates as bf16 ones are far above the bf16 model: the flag is what makes them fit.
  r = shell(kBin + " calibrate --gemm-rates " + fp8 + " --hardware h100-sxm --json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_GT(nlohmann::json::parse(r.out)["scale"].get<double>(), 1.5);
  // A GPU without FP8, and a trace (whose GEMMs are the run's bf16 ones), are refused.
  r = shell(kBin + " calibrate --gemm-rates " + fp8 + " --hardware a100-80gb --fp8");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("--fp8: a100-80gb has no FP8 rate"), std::string::npos) << r.err;
  r = shell(kBin + " calibrate --gemm-rates " + trace_of_table().string() +
            " --hardware h100-sxm --fp8");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("--fp8 reads a table of FP8 rates"), std::string::npos) << r.err;
}

// --held-rates: a GEMM held busy at the power limit, over the entry's burst rate for its shape, is
// the sustained share it measures (docs/ACCURACY.md items 8 and 52); written with the fit, the
// file holds that shape at the measured rate. At the rate the catalog holds 8192^3 today the share
// is the entry's own.
TEST(CalibrateCli, HeldRatesMeasureTheSustainedShareThatTheWrittenFileHolds) {
  const fs::path dir = temp_dir("calibrate_held");
  const nlohmann::json entry = nlohmann::json::parse(
      std::ifstream(std::string(MESHSCOPE_SOURCE_DIR) + "/sim/cost/catalog/h100-sxm.json"));
  const double sustained = entry["efficiency"]["sustained"].get<double>();
  // 0.848 x 762.34 TFLOP/s, the entry's burst rate for 8192^3 (docs/ACCURACY.md item 52).
  const double held_rate = sustained * 762.34e12;
  const fs::path held = dir / "held.csv";
  std::ofstream(held) << "b,m,n,k,flops_per_s\n1,8192,8192,8192," << held_rate << "\n";
  const fs::path out = dir / "h100-measured.json";
  Result r = shell(kBin + " calibrate --gemm-rates " + kTable + " --hardware h100-sxm --json " +
                   "--held-rates " + held.string() + " --write-hardware " + out.string());
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const nlohmann::json& h = j["held"];
  ASSERT_EQ(h["rows"].size(), 1u);
  EXPECT_NEAR(h["rows"][0]["entry_burst_flops_per_s"].get<double>(), 762.34e12, 0.01e12);
  EXPECT_NEAR(h["sustained_vs_entry"].get<double>(), sustained, 1e-4);
  EXPECT_EQ(h["entry_sustained"].get<double>(), sustained);
  // Over the burst with the fit's scale (OpenXLA's table bursts 8% above the entry).
  const double scale = j["scale"].get<double>();
  EXPECT_NEAR(h["sustained_vs_fit"].get<double>(), sustained / scale, 1e-4);

  // The written file: its ceiling scaled, its share the held one over that, one line of source
  // for each; read back, it holds 8192^3 at the measured rate.
  const nlohmann::json written = nlohmann::json::parse(std::ifstream(out));
  EXPECT_NEAR(written["efficiency"]["sustained"].get<double>(), sustained / scale, 1e-4);
  int sustained_lines = 0;
  for (const nlohmann::json& line : written["sources"])
    sustained_lines += line.get<std::string>().starts_with("efficiency.sustained ");
  EXPECT_EQ(sustained_lines, 1);
  EXPECT_NE(written["sources"][1].get<std::string>().find("--held-rates " + held.string()),
            std::string::npos)
      << written["sources"][1];
  r = shell(kBin + " calibrate --gemm-rates " + kTable + " --hardware " + out.string() +
            " --json --held-rates " + held.string());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NEAR(nlohmann::json::parse(r.out)["held"]["sustained_vs_entry"].get<double>(),
              written["efficiency"]["sustained"].get<double>(), 1e-6);

  // In text: the share beside the entry's own.
  r = shell(kBin + " calibrate --gemm-rates " + kTable + " --hardware h100-sxm --held-rates " +
            held.string());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("held at the power limit: 1 shape from " + held.string() +
                       ", sustained share 0.848 of the entry's burst rate (the entry's own "
                       "share: 0.848)"),
            std::string::npos)
      << r.out;
  // Held rates above the burst (FP8 rates here) are not written as a share.
  const fs::path above = dir / "above.json";
  r = shell(kBin + " calibrate --gemm-rates " + kTable + " --hardware h100-sxm --held-rates " +
            std::string(MESHSCOPE_SOURCE_DIR) + "/tests/fixtures/tilelang/h800_fp8_matmul.csv " +
            "--write-hardware " + above.string());
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("held rates above the burst rate with the fit (a share of 1.70"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(above));
  // Held rates of FP8 GEMMs, or beside a trace's rates (taken inside a run, so held already), are
  // refused; so is a trace given as held rates.
  r = shell(kBin + " calibrate --gemm-rates " + std::string(MESHSCOPE_SOURCE_DIR) +
            "/tests/fixtures/tilelang/h800_fp8_matmul.csv --hardware h100-sxm --fp8 --held-rates " +
            held.string());
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("--held-rates: the sustained share is measured on bf16 GEMMs"),
            std::string::npos)
      << r.err;
  r = shell(kBin + " calibrate --gemm-rates " + trace_of_table().string() +
            " --hardware h100-sxm --held-rates " + held.string());
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("are sustained rates already"), std::string::npos) << r.err;
  r = shell(kBin + " calibrate --gemm-rates " + kTable + " --hardware h100-sxm --held-rates " +
            trace_of_table().string());
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("--held-rates reads a table of GEMMs held busy"), std::string::npos)
      << r.err;
}

TEST(CalibrateCli, GemmRatesGoAloneAndABadTableIsNamed) {
  Result r = shell(kBin + " calibrate --gemm-rates " + kTable + " some.json");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("excludes"), std::string::npos) << r.err;
  r = shell(kBin + " calibrate --gemm-rates " + kTable);  // no hardware named
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("--gemm-rates requires --hardware"), std::string::npos) << r.err;
  r = shell(kBin + " calibrate");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("calibrate needs profiled traces (or --gemm-rates FILE)"), std::string::npos)
      << r.err;
  const fs::path bad = temp_dir("calibrate_gemm") / "bad.csv";
  std::ofstream(bad) << "b,m,n,k,flops_per_s\n1,1024,1024,1024,fast\n";
  r = shell(kBin + " calibrate --gemm-rates " + bad.string() + " --hardware h100-sxm");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find(bad.string() + ":2: want b,m,n,k,flops_per_s numbers"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.out, "");
  // An Nsight Systems export is named as what it is, not read as a table with a bad header.
  const fs::path sqlite = temp_dir("calibrate_gemm") / "report.sqlite";
  std::ofstream(sqlite, std::ios::binary) << std::string("SQLite format 3\0", 16) << "pages";
  r = shell(kBin + " calibrate --gemm-rates " + sqlite.string() + " --hardware h100-sxm");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("an SQLite file (an Nsight Systems export?)"), std::string::npos) << r.err;
  // Rates at twice an A100's peak are of no A100: nothing is written (it was, capped at 1).
  const fs::path fast = bad.parent_path() / "fast.csv";
  std::ofstream(fast) << "b,m,n,k,flops_per_s\n1,8192,8192,8192,6e14\n1,4096,4096,4096,5.5e14\n"
                         "1,2048,2048,2048,4.5e14\n";
  const fs::path written = bad.parent_path() / "fast-hw.json";
  r = shell(kBin + " calibrate --gemm-rates " + fast.string() +
            " --hardware a100-80gb --write-hardware " + written.string());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("times a100-80gb's peak: no clock runs a GEMM that far above it"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(written));
}

}  // namespace
}  // namespace meshscope::cli_testing
