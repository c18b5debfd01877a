// What `meshscope run` and `meshscope demo` share: building a schedule sized for a workload,
// executing it, checking it against one device, writing its trace, and the summary table.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "profiler/capture/tracer_factory.h"
#include "profiler/exec/workload_schedule.h"
#include "profiler/runtime/backend.h"
#include "sim/model/workload.h"
#include "sim/schedule/generators.h"
#include "sim/schedule/schedule.h"
#include "traces/analysis.h"

namespace meshscope::cli {

// The generator's schedule sized from the workload (profiler/exec/workload_schedule.h).
using exec::generate_for_workload;

struct RunSpec {
  std::string label;  // a short name for the table and the trace file: "1f1b-pp4"
  model::WorkloadSpec workload;
  schedule::Schedule schedule;
  int steps = 2;
  runtime::BackendKind backend = runtime::BackendKind::kAuto;
  capture::TracerKind tracer = capture::TracerKind::kAuto;
  double timeout_s = 60;
  bool check = true;  // also run one device on the same data and compare
  // Launched by mpirun: this process runs one rank; process 0 gets the whole run.
  runtime::ProcessMessenger* processes = nullptr;
  // The cores the ranks share: when the mesh has more ranks, the run is also replayed from its
  // thread CPU time (CpuTimeReplay). 0: the cores this process may run on (its CPU affinity).
  int cores = 0;
  std::filesystem::path replay_trace;  // where to write that replay's Chrome trace; empty: nowhere
};

// A cpu run whose ranks outnumber the cores waits for cores as much as for peers, so its
// wall-clock bubble says little about the schedule. This is the same run replayed in the
// simulator (sim/predict/measured_replay.h) with each action priced by its measured thread CPU
// time, one device per rank.
struct CpuTimeReplay {
  int cores = 0;  // what the ranks outnumbered
  int64_t step_ns = 0;
  double bubble_fraction = 0;
  std::vector<double> device_bubbles;
  int64_t transfer_ns = 0;      // per transfer: mean SEND + mean RECV copy time
  std::filesystem::path trace;  // empty when not written
  bool of_first_step = false;   // a run of one step: its actions' times include the warm-up
};

struct RunSummary {
  std::string label;
  std::string schedule;  // family name
  std::string mesh;      // "dp=2 pp=4 tp=1"
  int microbatches = 0;
  int virtual_stages = 1;
  std::string workload;  // Workload::describe()
  std::string backend;
  std::vector<double> losses;
  traces::TimelineAnalysis analysis;
  bool checked = false;
  double max_relative_error = 0;    // over losses, weights, biases and dp replicas' copies
  bool reference_diverged = false;  // the one-device run's losses or weights are not finite
  std::filesystem::path trace;      // empty when no trace was written
  // Why the trace or the replay's could not be written (neither was then: a full disk, a folder
  // gone); the run's figures stand, and the caller prints them before it fails with this.
  std::string output_error;
  std::optional<CpuTimeReplay> replay;  // a cpu run in one process with more ranks than cores
  // Under mpirun, cpu backend: the processes on process 0's node and that node's cores, when they
  // outnumber them (the ranks then wait for a core, and no replay separates it); 0 otherwise.
  int node_processes = 0;
  int node_cores = 0;
  // Started by mpirun (or a PMI launcher) as one process: its ranks, more than one, ran as its
  // threads, not a process each; 0 otherwise.
  int ranks_in_one_launched_process = 0;
  int64_t actions = 0;
  double wall_s = 0;
  // False on processes other than 0 of a multi-process run: they ran their rank and report
  // nothing (process 0 analyses, checks and writes the whole run).
  bool primary = true;
};

// Equivalence with one device is claimed within this relative error (float32 sums in another
// order differ by rounding only).
inline constexpr double kEquivalenceTolerance = 1e-5;

// Runs the spec; writes the Chrome trace (with idle spans) to `trace_path` unless it is empty.
// Throws what the executor throws (invalid config, deadlock, rank failure); a trace it cannot
// write is RunSummary::output_error.
// Launched by mpirun: a messenger over MPI when this build has it, null when this process runs
// alone; throws std::runtime_error when launched as several processes without MPI in the build.
std::unique_ptr<runtime::ProcessMessenger> messenger_for_launch();
RunSummary execute(const RunSpec& spec, const std::filesystem::path& trace_path, std::ostream* log);

// The mesh `run` and `schedules --dump` make of --dp/--pp/--tp (0: not given) and --devices (0:
// not given): dimensions not given are 1, except that with none given the family's own dimension
// (pp for a pipeline, dp or tp for those families) gets --devices, or 4. Throws UserError when
// --devices does not match the mesh.
mesh::MeshShape mesh_of_flags(int dp, int pp, int tp, int devices, schedule::Family family);
// Microbatches per replica when -m is not given: 8, or as many as the family's rule needs when
// that is more (pp; pp x chunks per rank for a family that needs one per stage, dualpipe-v).
int default_microbatches(schedule::Family family, int pp, int virtual_stages);

// --cores, or the cores this process may run on: its affinity (taskset -c 0 gives one).
int cores_of(const RunSpec& spec);
// The cores this process may run on (its CPU affinity), and a warning to print when --cores asks
// for more ("" when it does not): the rank threads then share fewer cores than the figures assume,
// and a run whose ranks outnumber those is not replayed from its thread CPU time.
int available_cores();
std::string cores_beyond_this_machine(int asked);

// One row per run: schedule, mesh, step time, overall and per-device bubble fractions,
// communication time, per-device peak activation memory, equivalence with one device.
std::string format_summary_table(const std::vector<RunSummary>& runs);

nlohmann::json to_json(const RunSummary& run);

// "replayed from thread CPU time (one device per rank; 8 ranks > 2 cores): step 9.1 ms, bubble
// 27.4% (per device 27/27/27/27 %), transfer 3.2 µs": the line `run` prints under its table.
std::string format_replay_line(const RunSummary& run);

}  // namespace meshscope::cli
