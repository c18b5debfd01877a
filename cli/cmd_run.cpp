// `meshscope run`: execute one schedule on a mesh with real tensors (cpu threads or GPUs), check
// it against one device, write its Chrome trace and print the summary.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <new>
#include <string>

#include "cli/commands.h"
#include "cli/json_text.h"
#include "cli/number_options.h"
#include "cli/output_path.h"
#include "cli/run_common.h"
#include "cli/run_memory.h"
#include "cli/workload_options.h"
#include "profiler/exec/launch_agreement.h"
#include "profiler/exec/process_run.h"
#include "profiler/exec/run_config.h"
#include "profiler/runtime/clock.h"
#include "profiler/runtime/process_cpu_backend.h"
#include "sim/schedule/posted_receives.h"
#include "sim/schedule/schedule_file.h"
#include "sim/schedule/schedule_text.h"
#include "sim/schedule/torch_csv.h"
#include "sim/schedule/validator.h"
#include "traces/number_text.h"

namespace meshscope::cli {
namespace {

struct RunArgs {
  std::string family = "1f1b";
  std::string schedule_file;
  int dp = 0, pp = 0, tp = 0;  // 0: not given
  int devices = 0;
  int microbatches = 0;    // 0: default_microbatches
  int virtual_stages = 0;  // 0: the family's default (families.h)
  WorkloadArgs workload;
  int steps = 2;
  std::string backend = "auto";
  std::string tracer = "auto";
  double timeout_s = 60;
  std::string out;
  std::string dump_schedule;
  bool no_check = false;
  bool no_validate = false;
  bool json = false;
  int cores = 0;  // 0: the cores this process may run on (cores_of)
  std::string replay_trace;
};

mesh::MeshShape resolve_mesh(const RunArgs& a, schedule::Family family) {
  return mesh_of_flags(a.dp, a.pp, a.tp, a.devices, family);
}

schedule::Schedule build_schedule(const RunArgs& a, const model::WorkloadSpec& spec) {
  if (!a.schedule_file.empty()) {
    schedule::LoadedSchedule loaded;
    try {
      loaded = schedule::load_schedule_file(a.schedule_file);
    } catch (const schedule::ScheduleParseError& e) {
      throw UserError(e.what());
    }
    schedule::Schedule& s = loaded.schedule;
    const auto result = schedule::validate(s);
    if (!result.ok() && a.no_validate) {
      if (runtime::launched_process_index() != 0) return s;  // process 0 warns
      const std::string where =
          schedule::location_in(a.schedule_file, loaded, result.error->rank, result.error->step);
      std::fprintf(stderr, "meshscope: warning: %s: %s (running it anyway: --no-validate)\n",
                   where.c_str(), result.error->message.c_str());
    } else if (!result.ok()) {
      throw UserError(
          schedule::location_in(a.schedule_file, loaded, result.error->rank, result.error->step) +
          ": " + schedule::invalid_schedule_message(s, result.error->message) + "\n" +
          result.error->grid);
    }
    // torch's schedule runs as torch's runtime runs it: each receive waited for at its use.
    if (schedule::posts_receives_ahead(s)) return schedule::receives_where_needed(s);
    return std::move(s);
  }
  const auto family = schedule::parse_family(a.family);
  if (!family) {
    throw usage_error("unknown schedule '" + a.family + "' (see `meshscope schedules`)");
  }
  schedule::GeneratorConfig g;
  g.family = *family;
  g.mesh = resolve_mesh(a, *family);
  g.microbatches =
      a.microbatches ? a.microbatches : default_microbatches(*family, g.mesh.pp, a.virtual_stages);
  g.virtual_stages =
      a.virtual_stages ? a.virtual_stages : schedule::info(*family).default_virtual_stages;
  try {
    return generate_for_workload(g, spec);
  } catch (const std::invalid_argument& e) {
    // `run --model chain` alone: a 3-layer model on the default four devices. Say where the
    // four came from, so the fix (--pp 3) is plain.
    const bool default_mesh = !a.dp && !a.pp && !a.tp && !a.devices;
    throw UserError(std::string(e.what()) +
                    (default_mesh ? " (the mesh " + mesh::to_string(g.mesh) +
                                        " is the default when no --dp, --pp, --tp or --devices "
                                        "is given)"
                                  : ""));
  } catch (const std::bad_alloc&) {
    throw UserError("out of memory laying out the model (--layers " + std::to_string(spec.layers) +
                    ", --hidden " + std::to_string(spec.hidden) + ", --batch " +
                    std::to_string(spec.batch) + "): use a smaller one");
  }
}

// A failed run under mpirun: the error is printed once, then the processes wait for each other
// briefly so mpirun does not kill process 0 before it printed; throws FailedElsewhere so main()
// prints nothing more. Process 0 prints its error (another process's, when that one's abort
// ended its run). A process that failed on its own sends its failure as its report, so the
// others, still inside their run, end with its message; it prints the failure itself only when
// process 0 did not (the same error in every process, a GPU missing everywhere, is said once).
[[noreturn]] void end_launch_with_error(runtime::ProcessMessenger& processes,
                                        const std::exception& e) {
  const bool reported = dynamic_cast<const exec::FailureReportedByProcessZero*>(&e) != nullptr;
  exec::ProcessReport report;
  report.outcome = exec::ProcessReport::Outcome::kFailed;
  report.message = e.what();
  const bool mine_to_say = processes.index() != 0 && !reported;
  if (processes.index() == 0) {
    std::fprintf(stderr, "meshscope: error: %s\n", e.what());
    std::fflush(stderr);
  } else if (mine_to_say) {
    report.message = "process " + std::to_string(processes.index()) + ": " + e.what();
    processes.abort(report.message);
  }
  std::string said_by_zero;
  bool heard_zero = false;
  try {
    const std::vector<std::string> all =
        processes.exchange_after_abort(exec::encode_report(report), "the other processes to stop",
                                       runtime::host_now_ns() + 5'000'000'000);
    if (!all.empty()) {
      said_by_zero = exec::decode_report(all.front()).message;
      heard_zero = true;
    }
  } catch (const std::exception&) {
    // A process that never gets here (it ended already, or is stuck) is mpirun's to end.
  }
  if (mine_to_say &&
      !(heard_zero && (said_by_zero == e.what() || said_by_zero == report.message))) {
    std::fprintf(stderr, "meshscope: error (process %d): %s\n", processes.index(), e.what());
    std::fflush(stderr);
  }
  throw FailedElsewhere(e.what());
}

// exec::agree_before_run for `meshscope run` under mpirun: this process's arguments, and a
// usage_error (CLI::ParseError: options that do not go together) from `checks` refusing the
// command line as the parser's own refusals do (exit status 2 in every process). Process 0
// prints the error; every process ends with FailedElsewhere (main prints nothing more).
void agree_before_run(runtime::ProcessMessenger& processes, const std::function<void()>& checks,
                      double timeout_s, const std::string& schedule_file = "",
                      const std::function<std::string()>& schedule_summary = nullptr) {
  exec::LaunchAgreement agreement;
  agreement.arguments = exec::arguments_of_this_process();
  agreement.checks = [&checks] {
    try {
      checks();
    } catch (const CLI::ParseError& e) {
      throw exec::CommandLineRefused(e.what());
    }
  };
  agreement.timeout_s = timeout_s;
  agreement.schedule_file = schedule_file;
  agreement.schedule_summary = schedule_summary;
  try {
    exec::agree_before_run(processes, agreement, [](const std::string& error) {
      std::fprintf(stderr, "meshscope: error: %s\n", error.c_str());
      std::fflush(stderr);
    });
  } catch (const exec::LaunchRefused& e) {
    throw FailedElsewhere(e.what(), e.exit_status);
  }
}

}  // namespace

int end_run_parse_error_across_processes(const std::string& message) {
  const std::unique_ptr<runtime::ProcessMessenger> processes = messenger_for_launch();
  if (processes == nullptr) {
    std::fprintf(stderr, "meshscope: error: %s\n", message.c_str());
    return 2;
  }
  try {
    // The command line did not parse, so its --timeout is unknown: the option's default.
    agree_before_run(
        *processes, [&] { throw exec::CommandLineRefused(message); }, RunArgs{}.timeout_s);
  } catch (const FailedElsewhere&) {
  }
  return 2;
}

namespace {

RunSpec spec_of(const RunArgs& a) {
  require_distinct_outputs({{"--out", &a.out},
                            {"--dump-schedule", &a.dump_schedule},
                            {"--replay-trace", &a.replay_trace}},
                           {{"--schedule-file", a.schedule_file}});
  RunSpec spec;
  spec.workload = a.workload.to_spec();
  // Before the layer list or any tensor exists: --layers 2147483647 is refused in milliseconds.
  // A schedule file holds no layer list (its mesh is read first); a family's schedule is laid out
  // over the model's layers, so its mesh is resolved from the flags alone.
  const auto fits = [&](const mesh::MeshShape& m, int microbatches) {
    check_run_fits_in_memory(spec.workload, std::max(m.dp, 1), std::max(m.tp, 1),
                             std::max(microbatches, 1), a.steps, !a.no_check);
  };
  if (!a.schedule_file.empty()) {
    spec.schedule = build_schedule(a, spec.workload);
    fits(spec.schedule.mesh, spec.schedule.num_microbatches);
  } else {
    if (const auto family = schedule::parse_family(a.family)) {
      const mesh::MeshShape m = resolve_mesh(a, *family);
      fits(m,
           a.microbatches ? a.microbatches : default_microbatches(*family, m.pp, a.virtual_stages));
    }
    spec.schedule = build_schedule(a, spec.workload);
  }
  spec.label = spec.schedule.name;
  spec.steps = a.steps;
  spec.timeout_s = a.timeout_s;
  spec.check = !a.no_check;
  spec.cores = a.cores;
  spec.replay_trace = a.replay_trace;
  spec.backend = parse_backend_option(a.backend);
  const auto tracer = capture::parse_tracer_kind(a.tracer);
  if (!tracer) throw usage_error("unknown tracer '" + a.tracer + "' (auto, host, cupti)");
  spec.tracer = *tracer;
  return spec;
}

void run(const RunArgs& a) {
  // Under mpirun: one rank per process; process 0 prints and writes, the others stay quiet.
  const std::unique_ptr<runtime::ProcessMessenger> processes = messenger_for_launch();
  RunSpec spec;
  const auto checks = [&] {
    spec = spec_of(a);
    // The replay from thread CPU time is of ranks sharing one process's cores.
    if (processes != nullptr && (a.cores > 0 || !a.replay_trace.empty()))
      throw usage_error(
          "--cores and --replay-trace are for ranks run as threads of one process; under mpirun "
          "each rank has a process of its own");
  };
  if (processes == nullptr) {
    checks();
    check_rank_threads_can_start(spec.schedule.mesh.size());
    std::fputs(cores_beyond_this_machine(a.cores).c_str(), stderr);
    // Linux's CFS lets a runnable thread wait sched_latency, 6 ms x (1 + log2 cores), for a core
    // (Documentation/scheduler/sched-design-CFS.rst): with ranks beyond the cores, a stall of
    // that order is no deadlock.
    if (const int cores = cores_of(spec); spec.schedule.mesh.size() > cores && a.timeout_s < 0.1) {
      std::fprintf(stderr,
                   "meshscope: warning: --timeout %s is shorter than a rank thread may wait for "
                   "one of the %d cores (tens of ms): such a wait reads as a deadlock\n",
                   traces::format_seconds(a.timeout_s).c_str(), cores);
    }
  } else {
    agree_before_run(*processes, checks, a.timeout_s, a.schedule_file,
                     [&] { return exec::schedule_summary(spec.schedule); });
  }
  spec.processes = processes.get();
  const bool primary = processes == nullptr || processes->index() == 0;
  RunSummary summary;
  try {
    // Inside: a failure here on process 0 ends the others through end_launch_with_error.
    if (processes != nullptr && processes->size() != spec.schedule.mesh.size()) {
      // Every process sees the same mismatch: process 0 says it.
      if (!primary) throw exec::FailureReportedByProcessZero("");
      runtime::check_one_rank_per_process(spec.schedule.mesh, *processes);
    }
    // After the launch is known to fit the mesh: a refused run had replaced the file.
    if (!a.dump_schedule.empty() && primary) schedule::save_file(spec.schedule, a.dump_schedule);
    summary = execute(spec, a.out, a.json || !primary ? nullptr : &std::cerr);
  } catch (const std::exception& e) {
    if (processes != nullptr) end_launch_with_error(*processes, e);
    if (dynamic_cast<const std::invalid_argument*>(&e) != nullptr) throw UserError(e.what());
    throw;
  }
  if (!summary.primary) return;
  if (a.json) {
    std::cout << json_text(to_json(summary)) << '\n';
  } else {
    std::printf("%s on %s, backend %s, %d step(s), loss %s\n", summary.workload.c_str(),
                summary.mesh.c_str(), summary.backend.c_str(), a.steps,
                format_losses(summary.losses).c_str());
    std::cout << format_summary_table({summary});
    std::cout << format_replay_line(summary);
    if (summary.replay && !summary.replay->trace.empty()) {
      std::printf("replay trace: %s\n", summary.replay->trace.c_str());
    } else if (summary.replay && !a.replay_trace.empty()) {
      std::printf("replay trace: not written (%s)\n", summary.output_error.c_str());
    } else if (!a.replay_trace.empty()) {
      std::printf(
          "replay trace: not written (a cpu run replays only when its ranks outnumber the "
          "cores; see --cores)\n");
    }
    if (!summary.output_error.empty()) {
      std::printf("trace: not written (%s)\n", summary.output_error.c_str());
    } else if (summary.trace.empty()) {
      std::printf("trace: not written (give --out FILE.json)\n");
    } else {
      std::printf("trace: %s (open in https://ui.perfetto.dev or chrome://tracing)\n",
                  summary.trace.c_str());
    }
  }
  // The figures above stand; the outputs asked for are not there.
  if (!summary.output_error.empty()) throw std::runtime_error(summary.output_error);
  for (size_t step = 0; step < summary.losses.size(); ++step) {
    if (!std::isfinite(summary.losses[step])) {
      throw std::runtime_error("training diverged: the loss of step " + std::to_string(step + 1) +
                               " of " + std::to_string(summary.losses.size()) + " is " +
                               std::to_string(summary.losses[step]) + " (try a smaller --lr)");
    }
  }
  if (summary.checked && summary.reference_diverged) {
    throw std::runtime_error(
        "training diverged: the one-device run's weights are no longer finite after " +
        std::to_string(a.steps) +
        " step(s), so there is nothing to compare the run with (try a "
        "smaller --lr)");
  }
  if (summary.checked && !(summary.max_relative_error <= kEquivalenceTolerance)) {
    throw std::runtime_error("the run differs from one device: max relative error " +
                             std::to_string(summary.max_relative_error));
  }
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto a = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand(
      "run",
      "Execute a schedule with real tensors on a device mesh (cpu threads or GPUs), compare the "
      "result with one device, write a Chrome trace and print bubbles per device. Under mpirun "
      "(`mpirun -np N meshscope run ...`, N = dp*pp*tp) each process runs one rank: cpu, or cuda "
      "with one GPU per process; process 0 prints and writes the whole run");
  cmd->add_option("--schedule,-s", a->family, "schedule family (see `meshscope schedules`)")
      ->capture_default_str();
  cmd->add_option("--schedule-file", a->schedule_file,
                  "run a schedule file instead (see `meshscope schedules --dump`): " +
                      std::string(schedule::kScheduleFileHelp))
      ->check(input_path_check());
  cmd->add_option("--dp", a->dp, "data-parallel replicas (default 1)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--pp", a->pp, "pipeline ranks (default 1; 4 when no dimension is given)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--tp", a->tp, "tensor-parallel ranks (default 1)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--devices", a->devices,
                  "number of devices; alone, it sizes the family's own dimension")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--microbatches,-m", a->microbatches,
                  "microbatches per replica per step (default 8, or as many as the family needs "
                  "when that is more: pp, or pp x chunks per rank for dualpipe-v)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--virtual,-v", a->virtual_stages,
                  "model chunks per pp rank (default: the family's, see `meshscope schedules`)")
      ->check(CLI::Range(1, 1 << 20));
  // A schedule file brings its own family, mesh and microbatches: those flags beside it would be
  // ignored.
  cmd->get_option("--schedule-file")
      ->excludes("--schedule")
      ->excludes("--dp")
      ->excludes("--pp")
      ->excludes("--tp")
      ->excludes("--devices")
      ->excludes("--microbatches")
      ->excludes("--virtual");
  add_workload_options(*cmd, a->workload);
  cmd->add_option("--steps", a->steps, "training steps")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  add_backend_option(*cmd, a->backend);
  cmd->add_option("--tracer", a->tracer, "auto, host (clock) or cupti")->capture_default_str();
  cmd->add_option("--timeout", a->timeout_s,
                  "seconds without progress after which the run is stopped as deadlocked (a "
                  "rank's own math is progress, however long; under mpirun each process watches "
                  "its own rank and hears the others' heartbeats)")
      ->capture_default_str()
      ->check(positive_seconds());
  cmd->add_option("--out,-o", a->out, "write the Chrome trace (JSON; .gz: compressed) here")
      ->check(chrome_trace_name_check())
      ->check(output_file_check());
  cmd->add_option("--dump-schedule", a->dump_schedule, "write the schedule text here")
      ->check(schedule_text_name_check())
      ->check(output_file_check());
  cmd->add_flag("--no-check", a->no_check, "skip the comparison with one device");
  cmd->add_flag("--no-validate", a->no_validate,
                "run a --schedule-file even when the validator rejects it (to see what the "
                "executor and its watchdog make of it)")
      ->needs("--schedule-file");
  cmd->add_flag("--json", a->json, "print the summary and the analysis as JSON");
  cmd->add_option("--cores", a->cores,
                  "the cores the rank threads share (default: the cores this process may run on, "
                  "its CPU affinity: taskset limits it); a cpu run "
                  "with more ranks is also replayed from its actions' thread CPU time, one device "
                  "per rank")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--replay-trace", a->replay_trace,
                  "write that replay's Chrome trace here (when there is one)")
      ->check(chrome_trace_name_check())
      ->check(output_file_check());
  cmd->callback([a] { run(*a); });
}

}  // namespace meshscope::cli
