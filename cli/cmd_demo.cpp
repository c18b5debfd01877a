// `meshscope demo`: every schedule family on the built-in models with synthetic data — the seed
// chain, pipelines on a deep MLP, tensor and data parallelism, and a dp x pp mesh — each checked
// against one device, each written as a Chrome trace, then one summary table.
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/json_text.h"
#include "cli/number_options.h"
#include "cli/output_path.h"
#include "cli/run_common.h"
#include "cli/workload_options.h"
#include "traces/atomic_file.h"

namespace meshscope::cli {
namespace {

struct DemoArgs {
  std::string out = "out/demo";
  std::string backend = "auto";
  int steps = 2;
  double timeout_s = 60;
  int cores = 0;  // 0: the cores this process may run on (cores_of)
};

struct DemoRun {
  std::string label;
  std::string what;  // one line for the progress output
  model::WorkloadSpec workload;
  schedule::GeneratorConfig generator;
};

model::WorkloadSpec mlp() {
  return {.kind = model::WorkloadKind::kMlp, .layers = 16, .hidden = 256, .batch = 64};
}

DemoRun make(std::string label, std::string what, model::WorkloadSpec w, schedule::Family f,
             mesh::MeshShape m, int microbatches, int virtual_stages = 1) {
  DemoRun r{std::move(label), std::move(what), w, {}};
  r.generator.family = f;
  r.generator.mesh = m;
  r.generator.microbatches = microbatches;
  r.generator.virtual_stages = virtual_stages;
  return r;
}

std::vector<DemoRun> demo_runs() {
  using schedule::Family;
  const model::WorkloadSpec chain{.kind = model::WorkloadKind::kChain, .batch = 16, .lr = 0.05f};
  const model::WorkloadSpec classifier{
      .kind = model::WorkloadKind::kClassifier, .batch = 64, .lr = 0.1f};
  return {
      make("seed-chain", "seed chain Linear(1->2)->Linear(2->3)->Linear(3->1), a stage per device",
           chain, Family::kNaive, {1, 3, 1}, 1),
      make("naive-pp4", "naive model parallelism, deep MLP on 4 stages", mlp(), Family::kNaive,
           {1, 4, 1}, 8),
      make("gpipe-pp4", "GPipe, deep MLP on 4 stages", mlp(), Family::kGpipe, {1, 4, 1}, 8),
      make("1f1b-pp4", "1F1B, deep MLP on 4 stages", mlp(), Family::kOneFOneB, {1, 4, 1}, 8),
      make("interleaved-pp4", "interleaved 1F1B, 2 chunks per rank", mlp(), Family::kInterleaved,
           {1, 4, 1}, 8, 2),
      make("zb-h1-pp4", "ZB-H1 zero-bubble, deep MLP on 4 stages", mlp(), Family::kZbH1, {1, 4, 1},
           8),
      make("tp4", "tensor parallel (Megatron column/row split), deep MLP", mlp(),
           Family::kTensorParallel, {1, 1, 4}, 2),
      make("dp4", "data parallel (gradient all-reduce), deep MLP", mlp(), Family::kDataParallel,
           {4, 1, 1}, 2),
      make("classifier-dp2", "MNIST-shaped classifier 784->256->10, data parallel", classifier,
           Family::kDataParallel, {2, 1, 1}, 2),
      make("mesh-dp2-pp4", "2-D mesh: two replicas, each split across four devices (1F1B)", mlp(),
           Family::kOneFOneB, {2, 4, 1}, 8),
  };
}

void run(const DemoArgs& a) {
  const runtime::BackendKind backend = parse_backend_option(a.backend);
  // The output folder refused as every command's output path is: exit 2, before any run.
  if (a.out.empty()) throw usage_error("-o/--out: the output folder is empty");
  std::fputs(cores_beyond_this_machine(a.cores).c_str(), stderr);
  const std::filesystem::path dir = a.out;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw usage_error("-o/--out: cannot create the output folder " + dir.string() + ": " +
                      ec.message());

  const std::vector<DemoRun> runs = demo_runs();
  // Every file it will write, checked before the first run (a folder or a symbolic link at one of
  // them failed after the runs before it, 11 s in).
  try {
    for (const DemoRun& d : runs) traces::check_output_path(dir / (d.label + ".json"));
    traces::check_output_path(dir / "summary.json");
  } catch (const std::runtime_error& e) {
    throw usage_error(std::string("-o/--out: ") + e.what());
  }
  // An earlier demo's summary would describe traces this one replaces: gone before the first
  // is written, so that a demo that fails or is interrupted leaves none that is stale.
  std::filesystem::remove(dir / "summary.json", ec);
  // One backend for every run, picked for the largest mesh (auto says once, up front, what it
  // picked and why), so the table compares like with like.
  mesh::MeshShape largest = runs.front().generator.mesh;
  for (const DemoRun& d : runs) {
    if (d.generator.mesh.size() > largest.size()) largest = d.generator.mesh;
  }
  const runtime::BackendKind kind = runtime::resolve_backend_kind(backend, largest, &std::cerr);
  std::vector<RunSummary> summaries;
  bool all_equal = true;
  for (size_t i = 0; i < runs.size(); ++i) {
    const DemoRun& d = runs[i];
    std::fprintf(stderr, "[%zu/%zu] %-16s %s ... ", i + 1, runs.size(), d.label.c_str(),
                 d.what.c_str());
    std::fflush(stderr);
    const auto t0 = std::chrono::steady_clock::now();
    RunSpec spec;
    spec.label = d.label;
    spec.workload = d.workload;
    spec.schedule = generate_for_workload(d.generator, d.workload);
    spec.steps = a.steps;
    spec.backend = kind;
    spec.timeout_s = a.timeout_s;
    spec.cores = a.cores;
    RunSummary s;
    try {
      s = execute(spec, dir / (d.label + ".json"), nullptr);
      if (!s.output_error.empty()) throw std::runtime_error(s.output_error);
    } catch (const std::exception&) {
      std::fprintf(stderr, "failed\n");  // the error follows on its own line
      throw;
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const bool equal = s.max_relative_error <= kEquivalenceTolerance;
    all_equal = all_equal && equal;
    std::fprintf(stderr, "%.2f s, loss %s, %s one device\n", seconds,
                 format_losses(s.losses).c_str(), equal ? "equals" : "DIFFERS FROM");
    summaries.push_back(std::move(s));
  }

  // "cpu (3 threads)" -> "cpu": the thread count differs per run.
  const std::string backend_name =
      summaries.empty() ? "-"
                        : summaries.front().backend.substr(0, summaries.front().backend.find(' '));
  std::printf("\nmeshscope demo: %zu runs, %d steps each, backend %s, one device per rank\n\n",
              summaries.size(), a.steps, backend_name.c_str());
  std::cout << format_summary_table(summaries);
  nlohmann::json all = nlohmann::json::array();
  for (const RunSummary& s : summaries) all.push_back(to_json(s));
  traces::write_file_atomic(dir / "summary.json", json_text(all) + "\n");
  std::printf(
      "\ntraces: %s/<run>.json (open in https://ui.perfetto.dev, chrome://tracing or "
      "meshscope-gui); summary: %s\n",
      dir.c_str(), (dir / "summary.json").c_str());
  if (!all_equal) throw std::runtime_error("some runs differ from one device (see the table)");
}

}  // namespace

void add_demo_command(CLI::App& app) {
  auto a = std::make_shared<DemoArgs>();
  CLI::App* cmd = app.add_subcommand(
      "demo",
      "Run every schedule family on the built-in models with synthetic data: the seed chain, "
      "naive/GPipe/1F1B/interleaved/ZB-H1 on a deep MLP, tensor and data parallelism, a dp x pp "
      "mesh; check each against one device; write a Chrome trace per run; print a summary");
  cmd->add_option("--out,-o", a->out, "output folder for the traces and summary.json")
      ->capture_default_str();
  add_backend_option(*cmd, a->backend);
  cmd->add_option("--steps", a->steps, "training steps per run")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--timeout", a->timeout_s, "seconds without progress before a run is stopped")
      ->capture_default_str()
      ->check(positive_seconds());
  cmd->add_option("--cores", a->cores,
                  "the cores the rank threads share (default: the cores this process may run on, "
                  "its CPU affinity); runs with "
                  "more ranks also show their replay from thread CPU time, one device per rank")
      ->check(CLI::Range(1, 1 << 20));
  cmd->callback([a] { run(*a); });
}

}  // namespace meshscope::cli
