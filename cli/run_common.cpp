// Execution, checking and reporting shared by `meshscope run` and `meshscope demo`.
#include "cli/run_common.h"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <new>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "cli/commands.h"
#include "profiler/exec/equivalence.h"
#include "profiler/exec/executor.h"
#include "profiler/exec/rank_plan.h"
#include "profiler/exec/reference.h"
#include "profiler/runtime/mpi_entry.h"
#include "profiler/runtime/plugin.h"
#include "profiler/runtime/process_link.h"
#include "sim/model/partition.h"
#include "sim/model/workload_cost.h"
#include "sim/predict/measured_replay.h"
#include "traces/analysis_report.h"
#include "traces/atomic_file.h"
#include "traces/chrome_export.h"

namespace meshscope::cli {
namespace {

std::string percent(double fraction) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * fraction);
  return buf;
}

// "43/21/12/5" (percent per device, no decimals) — compact enough for eight devices in a row.
std::string per_device_bubbles(const std::vector<double>& fractions) {
  std::string out;
  for (double f : fractions) {
    if (!out.empty()) out += '/';
    out += std::to_string(static_cast<int>(std::lround(100 * f)));
  }
  return out;
}

std::string per_device_bubbles(const traces::TimelineAnalysis& a) {
  std::vector<double> fractions;
  for (const auto& d : a.devices) fractions.push_back(d.bubble_fraction);
  return per_device_bubbles(fractions);
}

// The replay of a run whose ranks outnumber the cores (the executor measured its actions' thread
// CPU time: cpu backend, one process); nullopt otherwise.
// Its trace (--replay-trace) goes into `outputs`, committed with the run's own; when it cannot be
// written, `write_error` says why and the replay's figures are returned without it.
std::optional<CpuTimeReplay> replay_if_oversubscribed(const RunSpec& spec,
                                                      const exec::RunResult& result,
                                                      std::vector<traces::AtomicFile>& outputs,
                                                      std::string& write_error) {
  const int cores = cores_of(spec);
  if (result.action_cpu_ns.empty() || cores < 1 || spec.schedule.mesh.size() <= cores) {
    return std::nullopt;
  }
  predict::MeasuredReplay r = predict::replay_measured(spec.schedule, result.action_cpu_ns);
  CpuTimeReplay out;
  out.cores = cores;
  out.step_ns = r.step_ns;
  out.bubble_fraction = r.bubble_fraction;
  out.device_bubbles = r.device_bubbles;
  out.transfer_ns = r.transfer_ns;
  out.of_first_step = spec.steps == 1;
  if (!spec.replay_trace.empty()) {
    r.timeline.metadata["replayed_from"] = "thread CPU time per action of a cpu run";
    r.timeline.run.workload = result.timeline.run.workload;  // what ran, as the run's own trace
    traces::add_idle_spans(r.timeline);
    r.timeline.sort_spans();
    try {
      traces::write_chrome_trace(r.timeline, outputs.emplace_back(spec.replay_trace));
      out.trace = spec.replay_trace;
    } catch (const std::runtime_error& e) {
      write_error = e.what();
    }
  }
  return out;
}

// "1.2/0.9/0.5 MiB": per-device peak activation memory in one unit chosen by the largest.
std::string per_device_peaks(const traces::TimelineAnalysis& a) {
  int64_t largest = 0;
  for (const auto& d : a.devices) largest = std::max(largest, d.peak_activation_bytes.value_or(0));
  const char* unit = "KiB";
  double scale = 1024.0;
  if (largest >= (int64_t{1} << 30)) {
    unit = "GiB";
    scale = double(int64_t{1} << 30);
  } else if (largest >= (int64_t{1} << 20)) {
    unit = "MiB";
    scale = double(int64_t{1} << 20);
  }
  std::string out;
  for (const auto& d : a.devices) {
    if (!out.empty()) out += '/';
    char buf[32];
    if (d.peak_activation_bytes) {
      std::snprintf(buf, sizeof buf, "%.1f", *d.peak_activation_bytes / scale);
    } else {
      std::snprintf(buf, sizeof buf, "-");
    }
    out += buf;
  }
  return out + " " + unit;
}

std::string pad(const std::string& s, size_t width) {
  // Count UTF-8 code points, not bytes, so "µs" lines up.
  size_t cps = 0;
  for (unsigned char c : s) cps += (c & 0xC0) != 0x80;
  return cps >= width ? s : s + std::string(width - cps, ' ');
}

}  // namespace

// --cores, or the cores this process may run on: its affinity (taskset -c 0 gives one), which
// std::thread::hardware_concurrency does not see.
mesh::MeshShape mesh_of_flags(int dp, int pp, int tp, int devices, schedule::Family family) {
  mesh::MeshShape m{dp ? dp : 1, pp ? pp : 1, tp ? tp : 1};
  if (!dp && !pp && !tp) {
    const int n = devices ? devices : 4;
    if (family == schedule::Family::kDataParallel) {
      m.dp = n;
    } else if (family == schedule::Family::kTensorParallel) {
      m.tp = n;
    } else {
      m.pp = n;
    }
  }
  if (devices && devices != m.size()) {
    throw UserError("--devices " + std::to_string(devices) + " does not match the mesh " +
                    mesh::to_string(m) + " (" + std::to_string(m.size()) + " devices)");
  }
  return m;
}

int default_microbatches(schedule::Family family, int pp, int virtual_stages) {
  const schedule::FamilyInfo& info = schedule::info(family);
  const int chunks = virtual_stages > 0 ? virtual_stages : info.default_virtual_stages;
  const int fewest =
      info.microbatch_rule == schedule::MicrobatchRule::kAtLeastStages ? pp * chunks : pp;
  return std::max(8, fewest);
}

int cores_of(const RunSpec& spec) { return spec.cores > 0 ? spec.cores : available_cores(); }

int available_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  return static_cast<int>(std::thread::hardware_concurrency());
}

std::string cores_beyond_this_machine(int asked) {
  const int cores = available_cores();
  if (asked <= cores || cores <= 0) return "";
  return "meshscope: warning: --cores " + std::to_string(asked) + " is more than the " +
         std::to_string(cores) + (cores == 1 ? " core" : " cores") +
         " this process may run on: rank threads beyond those wait for a core, and a run with "
         "up to " +
         std::to_string(asked) +
         " ranks is taken as one core per rank, so it is not replayed from its thread CPU time\n";
}

namespace {

RunSummary execute_unguarded(const RunSpec& spec, const std::filesystem::path& trace_path,
                             std::ostream* log) {
  exec::RunConfig config;
  config.workload = spec.workload;
  config.schedule = spec.schedule;
  config.backend = spec.backend;
  config.tracer = spec.tracer;
  config.steps = spec.steps;
  config.check_replicas = spec.check;
  config.timeout_s = spec.timeout_s;
  config.log = log;
  config.backend_options.processes = spec.processes;
  exec::RunResult result = exec::run(config);

  RunSummary s;
  if (result.process != 0) {
    s.primary = false;
    s.backend = result.backend;
    return s;
  }
  s.label = spec.label;
  s.schedule = spec.schedule.name;
  s.mesh = mesh::to_string(exec::run_mesh(spec.schedule.mesh, spec.workload));
  s.microbatches = spec.schedule.num_microbatches;
  s.virtual_stages = spec.schedule.virtual_stages();
  s.workload = model::make_workload(spec.workload).describe();
  s.backend = result.backend;
  s.losses = result.losses;
  s.actions = result.actions;
  s.wall_s = result.wall_s;
  s.analysis = traces::analyze(result.timeline);
  // The trace and the replay's are each synced before either replaces its target: a failed
  // write of one leaves the other's old contents too.
  std::vector<traces::AtomicFile> outputs;
  s.replay = replay_if_oversubscribed(spec, result, outputs, s.output_error);
  if (spec.check) {
    s.checked = true;
    // A moe block routes each replica's microbatch as one group: the reference does the same.
    const int routing_rows = model::microbatch_rows(spec.workload.batch, spec.schedule.mesh.dp,
                                                    spec.schedule.num_microbatches);
    const exec::ReferenceResult reference =
        exec::run_reference(spec.workload, spec.steps, routing_rows);
    s.max_relative_error = exec::max_relative_error(result, reference);
    s.reference_diverged = !exec::finite(reference);
  }
  // The cores the rank threads shared, for `calibrate` to say when they outnumbered them: no more
  // than this process may run on, whatever --cores said (--cores 4 on 2 cores recorded 4, and
  // calibrate did not warn). Under mpirun, the node's cores (each process may be bound to one: not
  // the affinity mask), when every process ran on this node; processes beyond them are said under
  // the table.
  // Typed in the run descriptor (what readers read), and said in the metadata for people.
  if (s.backend.starts_with("cpu") && result.processes <= 1) {
    const int here = available_cores();
    result.timeline.run.cores = here > 0 ? std::min(cores_of(spec), here) : cores_of(spec);
    result.timeline.metadata["cores"] = std::to_string(result.timeline.run.cores);
  } else if (s.backend.starts_with("cpu")) {
    const int here = runtime::launched_processes_on_this_node();
    const int cores = static_cast<int>(std::thread::hardware_concurrency());
    if (here == result.processes && cores > 0) {
      result.timeline.run.cores = cores;
      result.timeline.metadata["cores"] = std::to_string(cores);
    }
    if (here > cores && cores > 0) {
      s.node_processes = here;
      s.node_cores = cores;
    }
  }
  const int ranks = exec::run_mesh(spec.schedule.mesh, spec.workload).size();
  if (runtime::launched_by_a_launcher() && result.processes <= 1 && ranks > 1)
    s.ranks_in_one_launched_process = ranks;
  try {
    if (!s.output_error.empty()) throw std::runtime_error(s.output_error);
    if (!trace_path.empty()) {
      traces::add_idle_spans(result.timeline);
      result.timeline.sort_spans();
      traces::write_chrome_trace(result.timeline, outputs.emplace_back(trace_path));
      s.trace = trace_path;
    }
    for (traces::AtomicFile& f : outputs) f.sync();
    for (traces::AtomicFile& f : outputs) f.commit();
  } catch (const std::runtime_error& e) {
    // A write or sync that failed left neither file (each is synced before any replaces its
    // target; only a failed rename after the other's could leave one): the figures of the run
    // that did complete are returned with why.
    s.output_error = e.what();
    s.trace.clear();
    if (s.replay) s.replay->trace.clear();
    outputs.clear();
  }
  return s;
}

}  // namespace

std::unique_ptr<runtime::ProcessMessenger> messenger_for_launch() {
  const int processes = runtime::launched_process_count();
  if (processes <= 1) return nullptr;
  if (MESHSCOPE_HAS_MPI == 0) {
    throw std::runtime_error("started as one of " + std::to_string(processes) +
                             " processes (mpirun), but this build has no MPI: configure with "
                             "MESHSCOPE_MPI=ON (Debian: libopenmpi-dev), or start one process");
  }
  std::string why;
  using Get = const runtime::mpi::MpiLinkEntry* (*)();
  const auto get = reinterpret_cast<Get>(
      runtime::plugin_symbol(runtime::kMpiModuleFile, runtime::mpi::kMpiLinkSymbol, &why));
  if (get == nullptr || get()->abi != runtime::kPluginAbi) {
    throw std::runtime_error("started as one of " + std::to_string(processes) +
                             " processes (mpirun), but MPI is not available: " +
                             (get == nullptr ? why : "libmeshscope-mpi.so is from another build"));
  }
  return std::make_unique<runtime::ProcessMessenger>(get()->make_mpi_link());
}

RunSummary execute(const RunSpec& spec, const std::filesystem::path& trace_path,
                   std::ostream* log) {
  try {
    return execute_unguarded(spec, trace_path, log);
  } catch (const std::bad_alloc&) {
    // Named from the spec alone: building the workload again could run out of memory too.
    const model::WorkloadSpec& w = spec.workload;
    throw std::runtime_error(
        "out of memory running " + spec.label + " (" + std::string(model::name(w.kind)) +
        " layers=" + std::to_string(w.layers) + " hidden=" + std::to_string(w.hidden) +
        " batch=" + std::to_string(w.batch) + " on " + mesh::to_string(spec.schedule.mesh) + ", " +
        std::to_string(spec.steps) + " steps): use a smaller model, batch or step count");
  }
}

std::string format_summary_table(const std::vector<RunSummary>& runs) {
  std::vector<std::string> header = {"run",
                                     "schedule",
                                     "mesh",
                                     "mb",
                                     "step time",
                                     "bubble",
                                     "bubble per device %",
                                     "comm time",
                                     "peak activations per device",
                                     "vs 1 device"};
  // The replay's columns follow the wall-clock bubbles they stand beside.
  constexpr std::ptrdiff_t kReplayColumn = 7;
  const bool any_replay = std::any_of(runs.begin(), runs.end(),
                                      [](const RunSummary& r) { return r.replay.has_value(); });
  if (any_replay) {
    header.insert(header.begin() + kReplayColumn, {"cpu-time replay: step", "replay bubble"});
  }
  std::vector<std::vector<std::string>> rows;
  for (const RunSummary& r : runs) {
    const auto& a = r.analysis;
    const int64_t devices = std::max<int64_t>(1, static_cast<int64_t>(a.devices.size()));
    // Communication time per device per step: the union of its transfers, averaged.
    const int64_t steps = std::max<int64_t>(1, static_cast<int64_t>(a.windows.size()));
    std::string schedule = r.schedule;
    if (r.virtual_stages > 1) schedule += " v=" + std::to_string(r.virtual_stages);
    std::string check = "-";
    if (r.checked && r.reference_diverged) {
      check = "diverged on one device";
    } else if (r.checked) {
      char buf[48];
      std::snprintf(buf, sizeof buf, "%s (%.1e)",
                    r.max_relative_error <= kEquivalenceTolerance ? "equal" : "DIFFERS",
                    r.max_relative_error);
      check = buf;
    }
    rows.push_back({r.label, schedule, r.mesh, std::to_string(r.microbatches),
                    traces::format_duration(a.step_time_ns), percent(a.bubble_fraction),
                    per_device_bubbles(a),
                    traces::format_duration(a.communication_ns / devices / steps),
                    per_device_peaks(a), check});
    if (any_replay && r.replay) {
      rows.back().insert(
          rows.back().begin() + kReplayColumn,
          {traces::format_duration(r.replay->step_ns), percent(r.replay->bubble_fraction)});
    } else if (any_replay) {
      rows.back().insert(rows.back().begin() + kReplayColumn, {"-", "-"});
    }
  }
  std::vector<size_t> width(header.size());
  auto measure = [](const std::string& s) {
    size_t cps = 0;
    for (unsigned char c : s) cps += (c & 0xC0) != 0x80;
    return cps;
  };
  for (size_t c = 0; c < header.size(); ++c) {
    width[c] = measure(header[c]);
    for (const auto& row : rows) width[c] = std::max(width[c], measure(row[c]));
  }
  std::ostringstream out;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string l;
    for (size_t c = 0; c < cells.size(); ++c) {
      l += c + 1 < cells.size() ? pad(cells[c], width[c] + 2) : cells[c];
    }
    out << l << '\n';
  };
  line(header);
  for (const auto& row : rows) line(row);
  out << "step time: mean over steps; bubble: idle share of the step window (all devices); comm "
         "time: per device per step\n";
  for (const RunSummary& r : runs) {
    if (r.node_processes == 0) continue;
    out << "the " << r.node_processes << " processes on this node outnumber its " << r.node_cores
        << (r.node_cores == 1 ? " core" : " cores")
        << ", so the wall-clock figures include waiting for a core (a replay from thread CPU "
           "time needs the ranks as threads of one process: run without mpirun)\n";
    break;
  }
  for (const RunSummary& r : runs) {
    if (r.ranks_in_one_launched_process == 0) continue;
    out << "mpirun started one process: its " << r.ranks_in_one_launched_process
        << " ranks ran as threads of it (mpirun -np " << r.ranks_in_one_launched_process
        << " runs a process per rank)\n";
    break;
  }
  if (any_replay) {
    int cores = 0;
    for (const RunSummary& r : runs) cores = r.replay ? r.replay->cores : cores;
    out << "cpu-time replay: the ranks outnumber the " << cores << (cores == 1 ? " core" : " cores")
        << ", so the wall-clock figures include waiting for a core; each such run is "
           "replayed in the simulator with its actions' measured thread CPU time, one device per "
           "rank\n";
  }
  return out.str();
}

nlohmann::json to_json(const RunSummary& r) {
  nlohmann::json j;
  j["label"] = r.label;
  j["schedule"] = r.schedule;
  j["mesh"] = r.mesh;
  j["microbatches"] = r.microbatches;
  j["virtual_stages"] = r.virtual_stages;
  j["workload"] = r.workload;
  j["backend"] = r.backend;
  j["losses"] = r.losses;
  j["actions"] = r.actions;
  j["wall_s"] = r.wall_s;
  if (r.checked) {
    j["max_relative_error"] = r.max_relative_error;
    j["equal_to_one_device"] = r.max_relative_error <= kEquivalenceTolerance;
    j["one_device_diverged"] = r.reference_diverged;
  }
  if (!r.trace.empty()) j["trace"] = r.trace.string();
  if (!r.output_error.empty()) j["output_error"] = r.output_error;
  j["analysis"] = traces::to_json(r.analysis);
  if (r.replay) {
    nlohmann::json rep = {{"cores", r.replay->cores},
                          {"step_time_ns", r.replay->step_ns},
                          {"bubble_fraction", r.replay->bubble_fraction},
                          {"device_bubble_fractions", r.replay->device_bubbles},
                          {"transfer_ns", r.replay->transfer_ns}};
    if (!r.replay->trace.empty()) rep["trace"] = r.replay->trace.string();
    j["cpu_time_replay"] = std::move(rep);
  }
  return j;
}

std::string format_replay_line(const RunSummary& r) {
  if (!r.replay) return "";
  const CpuTimeReplay& p = *r.replay;
  int ranks = static_cast<int>(p.device_bubbles.size());
  return "replayed from thread CPU time (one device per rank; " + std::to_string(ranks) +
         " ranks > " + std::to_string(p.cores) + (p.cores == 1 ? " core" : " cores") + "): step " +
         traces::format_duration(p.step_ns) + ", bubble " + percent(p.bubble_fraction) +
         " (per device " + per_device_bubbles(p.device_bubbles) + " %), transfer " +
         traces::format_duration(p.transfer_ns) +
         (p.of_first_step ? " (of the only step, the first: its warm-up included; a run of 2 "
                            "steps or more is replayed over the steps after the first)"
                          : "") +
         "\n";
}

}  // namespace meshscope::cli
