// The insides of simulate() (simulate.cpp), shared by the files that carry it out: the run of the
// engine over the representatives or every rank (simulate_run.cpp) and the summary of what it
// gave (simulate_summary.cpp). Not a public interface: simulate.h is.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/predict/resolved.h"
#include "sim/predict/simulate.h"
#include "sim/schedule/generators.h"
#include "sim/schedule/schedule.h"

namespace meshscope::predict::simulate_parts {

// What the engine ran, and over which ranks.
struct Run {
  engine::EngineResult result;
  schedule::Schedule schedule;
  bool once = false;     // the representatives stood for their replicas
  bool reduced = false;  // `schedule` holds only the representatives (pp rank p is rank p)
  bool timeline = false;
  bool skipped = false;  // the engine did not run: the configuration cannot fit memory
};

// CPU backend: every rank is a thread; beyond the host's cores they share them.
inline bool shares_cores(const Resolved& r) {
  const PredictConfig& c = r.config;
  return r.hw.kind == "cpu" && r.hw.host_cores > 0 &&
         c.mesh.dp * c.mesh.pp * c.mesh.tp > r.hw.host_cores;
}

// ---- the run (simulate_run.cpp)
// ------------------------------------------------------------------

// The generator's schedule, or its refusal with the config's keys that would lift it.
schedule::Schedule generate_or_explain(const schedule::GeneratorConfig& g);

// Whether the engine builds a Timeline or records busy time alone (see simulate_run.cpp).
void record_for(const SimulateOptions& o, engine::EngineInput& in);

// What simulating every rank holds in memory, refused beyond half of this machine's.
// `writing`: for a schedule written out (SimulateOptions::full_schedule), not simulated.
void check_full_footprint(const Resolved& r, bool timeline, bool writing = false);

// Every rank's programs, ZeRO's collectives in them.
schedule::Schedule full_schedule(const Resolved& r);

// A given schedule (SimulateOptions::schedule): validated, then run once over the representatives
// when it is symmetric.
Run run_given(const Resolved& r, FullMeshPrices& prices, engine::EngineInput in,
              const SimulateOptions& o);

// Generated: the representatives (dp 0, tp 0 of each pp rank) alone when every replica's links
// and collectives cost what the representative's do; else every rank.
Run run_generated(const Resolved& r, FullMeshPrices& prices, engine::EngineInput in,
                  const SimulateOptions& o);

// ---- the summary (simulate_summary.cpp)
// ----------------------------------------------------------

// The program of pp coordinate p's (dp 0, tp 0) rank in the run's schedule.
const std::vector<schedule::Action>& program_of(const Resolved& r, const Run& run, int p);

// The peak activation bytes of pp coordinate p.
using ActivationOf = std::function<int64_t(int)>;

// Memory per pp coordinate (replicas are alike) and the peak over them, given each coordinate's
// peak activation.
void add_memory(const Resolved& r, const Run& run, const ActivationOf& activation_of, Summary& s);

// Throughput, MFU, its range, bubbles, memory and (with_breakdown) the busiest stage's terms.
Summary summarise(const Resolved& r, FullMeshPrices& prices, const Run& run, bool with_breakdown);

}  // namespace meshscope::predict::simulate_parts
