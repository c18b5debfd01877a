// `meshscope simulate --config FILE.json [--out trace.json] [--json]`: one configuration simulated
// into a Timeline: the Chrome trace, the same summary table as `run`, and the predicted figures.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/json_text.h"
#include "cli/number_text.h"
#include "cli/output_path.h"
#include "cli/run_common.h"
#include "cli/sim_options.h"
#include "sim/predict/config.h"
#include "sim/predict/simulate.h"
#include "sim/schedule/schedule_file.h"
#include "sim/schedule/schedule_text.h"
#include "sim/schedule/torch_csv.h"
#include "sim/schedule/validator.h"
#include "traces/analysis.h"
#include "traces/analysis_report.h"
#include "traces/atomic_file.h"
#include "traces/byte_size.h"
#include "traces/chrome_export.h"
#include "traces/gzip_writer.h"

namespace meshscope::cli {
namespace {

struct SimulateArgs {
  SimInputArgs input;
  std::string out;
  std::string schedule_out;
  std::string schedule_file;
  bool json = false;
  bool all_devices = false;
};

// A trace of a large mesh with every device (--all-devices) runs to gigabytes: said before the
// write begins, with what opens it. Perfetto's UI runs in a browser, whose memory is typically
// limited to 2 GB, and a trace takes more memory than its file
// (https://perfetto.dev/docs/visualization/large-traces); 1 GB is the line (assumption: half
// that limit, as a JSON trace's size in memory is not stated).
void warn_of_a_large_trace(const traces::Timeline& t, const SimulateArgs& a) {
  const int64_t bytes = traces::estimated_chrome_bytes(t);
  if (bytes < 1'000'000'000) return;
  const bool compressed = traces::is_gzip_path(a.out);
  std::fprintf(stderr,
               "meshscope: writing %.1f million spans to %s: about %s%s, more than Perfetto's UI "
               "holds in a browser (open it through `trace_processor --httpd`, Perfetto's mode for "
               "large traces)%s\n",
               static_cast<double>(t.spans.size()) / 1e6, a.out.c_str(),
               traces::format_bytes(bytes).c_str(), compressed ? " before compression" : "",
               a.all_devices ? "; without --all-devices, one device stands for each set of "
                               "identical replicas"
                             : "");
}

void run(const SimulateArgs& a) {
  require_distinct_outputs({{"--out", &a.out}, {"--schedule-out", &a.schedule_out}},
                           {{"--config", a.input.config},
                            {"--calibration", a.input.calibration},
                            {"--schedule-file", a.schedule_file}});
  const SimInputs in = load_sim_inputs(a.input);
  const std::string& where = a.input.config;
  const auto points = predict::expand_sweep(in.config, where);
  if (points.size() != 1)
    throw UserError(where + ": simulate takes one configuration, not a sweep (use predict)");
  const predict::PredictConfig& c = points.front().config;
  // A trace's device index is 16 bits (traces/timeline.h): refused before the simulation runs.
  if (a.all_devices && c.gpus() >= 65535)
    throw UserError(where + ": --all-devices would put " + std::to_string(c.gpus()) +
                    " devices in the trace, which holds at most 65534; leave it out (the "
                    "representatives stand for their identical replicas)");
  predict::SimulateOptions so;
  so.calibration = in.calibration_or_null();
  so.expand_replicas = a.all_devices;
  so.full_schedule = !a.schedule_out.empty();
  schedule::LoadedSchedule loaded;
  schedule::Schedule& given = loaded.schedule;
  if (!a.schedule_file.empty()) {
    try {
      loaded = schedule::load_schedule_file(a.schedule_file);
    } catch (const schedule::ScheduleParseError& e) {
      throw UserError(e.what());
    }
    const schedule::ValidationResult valid = schedule::validate(given);
    if (!valid.ok()) {
      throw UserError(
          schedule::location_in(a.schedule_file, loaded, valid.error->rank, valid.error->step) +
          ": " + schedule::invalid_schedule_message(given, valid.error->message));
    }
    so.schedule = &given;
  }
  predict::Simulation sim;
  try {
    sim = predict::simulate(c, so);
  } catch (const std::invalid_argument& e) {
    throw UserError(where + ": " + e.what());
  }
  // Both outputs synced before either replaces its target: a failed one keeps the other's old
  // contents too.
  std::vector<traces::AtomicFile> outputs;
  if (!a.schedule_out.empty())
    outputs.emplace_back(a.schedule_out).write(schedule::dump(sim.schedule));
  traces::add_idle_spans(sim.timeline);
  sim.timeline.sort_spans();
  // The configuration itself, for a reader that predicts from the trace (the viewer's what-if):
  // its run descriptor holds the mesh, schedule and model, not the framework or the options.
  sim.timeline.run.sim_config = points.front().json.dump();
  sim.timeline.metadata["config"] = sim.timeline.run.sim_config;
  if (!a.out.empty()) {
    warn_of_a_large_trace(sim.timeline, a);
    traces::write_chrome_trace(sim.timeline, outputs.emplace_back(a.out));
  }
  for (traces::AtomicFile& f : outputs) f.sync();
  for (traces::AtomicFile& f : outputs) f.commit();
  if (a.json) {
    nlohmann::json out = predict::to_json(sim.summary);
    if (!a.out.empty()) out["trace"] = a.out;
    std::printf("%s\n", json_text(out).c_str());
    return;
  }
  RunSummary r;
  r.label = "sim";
  r.schedule = sim.summary.schedule;
  r.mesh = sim.summary.mesh;
  r.microbatches = sim.summary.microbatches;
  r.virtual_stages = c.virtual_stages;
  r.workload = sim.summary.model;
  r.backend = "sim";
  r.analysis = traces::analyze(sim.timeline);
  r.trace = a.out;
  r.actions = sim.summary.simulated_actions;
  std::printf("%s", format_summary_table({r}).c_str());
  const predict::Summary& s = sim.summary;
  // A model without a sequence (mlp, vgg) counts one token a sample: named as samples; a CPU's
  // rate is a small fraction of a TFLOP/s, given in its digits rather than as 0.0 (as predict).
  const bool samples = s.samples_per_s > 0 && s.tokens_per_s == s.samples_per_s;
  std::printf(
      "model %s on %lld x %s: %.4g s/step, %.4g %s, %s TFLOP/s per device, MFU %s, peak memory "
      "%.1f GiB of %.1f GiB (%s)\n",
      s.model.c_str(), static_cast<long long>(s.gpus), s.hardware.c_str(), s.step_time_s,
      s.tokens_per_s, samples ? "samples/s" : "tokens/s", tflops_text(s.tflops_per_gpu).c_str(),
      mfu_percent_text(s.mfu).c_str(), s.peak_memory_bytes / 1073741824.0,
      s.memory_capacity_bytes / 1073741824.0, s.fits ? "fits" : "DOES NOT FIT");
  if (s.replicas_simulated_once && !a.all_devices)
    std::printf(
        "identical dp/tp replicas simulated once: %lld devices in the trace stand for %lld "
        "(--all-devices copies them)\n",
        static_cast<long long>(s.simulated_ranks), static_cast<long long>(s.gpus));
  if (!a.out.empty()) {
    std::error_code ec;
    const auto bytes = std::filesystem::file_size(a.out, ec);
    std::printf("trace: %s%s\n", a.out.c_str(),
                ec ? "" : (" (" + traces::format_bytes(static_cast<int64_t>(bytes)) + ")").c_str());
  }
}

}  // namespace

void add_simulate_command(CLI::App& app) {
  auto args = std::make_shared<SimulateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "simulate",
      "Simulate one configuration (same JSON as predict) into a Timeline: Chrome trace, the "
      "summary table of `run`, step time, MFU and memory.");
  add_sim_input_options(*cmd, args->input, "configuration JSON (keys: docs/CONFIG.md)");
  // -o as every other command that writes a file has it (`simulate -o x.json` was refused).
  cmd->add_option("-o,--out", args->out,
                  "write the simulated Chrome trace here (.gz: compressed); one of more than "
                  "about 1 GB is announced on stderr before it is written")
      ->check(chrome_trace_name_check())
      ->check(output_file_check());
  cmd->add_option("--schedule-out", args->schedule_out,
                  "write the simulated schedule (text form) here")
      ->check(schedule_text_name_check())
      ->check(output_file_check());
  cmd->add_option("--schedule-file", args->schedule_file,
                  "simulate this schedule instead of generating one; costs from --config. " +
                      std::string(schedule::kScheduleFileHelp))
      ->check(input_path_check());
  cmd->add_flag("--all-devices", args->all_devices,
                "put every device in the trace even when identical replicas were simulated once "
                "(sim/predict/configs/llama3-405b.json, 8,192 GPUs: a 4.1 GB trace)");
  cmd->add_flag("--json", args->json, "print the predicted figures as JSON");
  cmd->callback([args] { run(*args); });
}

}  // namespace meshscope::cli
