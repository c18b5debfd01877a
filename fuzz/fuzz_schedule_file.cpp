// libFuzzer target: any bytes as a schedule file (`validate`, `run --schedule-file`,
// `simulate --schedule`): schedule text or torch's CSV, told apart as the file reader does by the
// first byte. Then three promises are checked on what parses:
//   - its schedule text reads back as the same schedule (schedule::dump, schedule::load);
//   - the validator's report is made without fault;
//   - a schedule the validator accepts runs to its end in the simulator (sim/engine/engine.h: "a
//     schedule the validator accepts runs here"), on made-up costs.
// Only ScheduleParseError may come out of reading; a crash, a sanitizer report, another exception,
// a broken promise (a trap), a hang or runaway memory is a bug. Seeded with the torch CSVs of
// tests/fixtures/torch and the text of every family meshscope generates (scripts/ci-fuzz.sh).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "fuzz/fuzz_check.h"
#include "sim/engine/engine.h"
#include "sim/schedule/schedule_file.h"
#include "sim/schedule/schedule_text.h"
#include "sim/schedule/torch_csv.h"
#include "sim/schedule/validator.h"

namespace {

// Beyond this the engine's per-rank state alone grows past what a fuzz run should take; the
// validator and the text round trip still see such schedules.
constexpr size_t kMaxEngineRanks = 4096;
constexpr size_t kMaxEngineActions = 200000;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace meshscope;
  using fuzz::require;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  schedule::Schedule s;
  try {
    if (schedule::detect_schedule_format("", text) == schedule::ScheduleFileFormat::kText) {
      s = schedule::load(text, "fuzz.sched");
    } else {
      s = schedule::parse_torch_csv(text, "fuzz.csv").schedule;
    }
  } catch (const schedule::ScheduleParseError&) {
    return 0;
  }
  const std::string dumped = schedule::dump(s);
  try {
    require(schedule::dump(schedule::load(dumped, "dumped.sched")) == dumped);
  } catch (const schedule::ScheduleParseError&) {
    require(false);  // our own text refused by our own reader
  }
  const schedule::ValidationResult v = schedule::validate(s);
  require(!v.report(s).empty());
  if (!v.ok() || s.ranks.size() > kMaxEngineRanks) return 0;
  size_t actions = 0;
  for (const auto& program : s.ranks) actions += program.size();
  if (actions > kMaxEngineActions) return 0;

  engine::EngineInput in;
  in.schedule = &s;
  in.stages.assign(static_cast<size_t>(std::max(1, s.num_stages)),
                   engine::StageTiming{.forward_ns = 1000,
                                       .backward_ns = 2000,
                                       .input_grad_ns = 1000,
                                       .weight_grad_ns = 1000,
                                       .optimizer_ns = 100,
                                       .activation_bytes = 64,
                                       .p2p_bytes = 4096});
  in.collective_ns = [](int, const schedule::Action&) { return int64_t{500}; };
  in.build_timeline = false;
  try {
    const engine::EngineResult r = engine::simulate(in);
    require(r.step_time_ns >= 0);
  } catch (const engine::SimulationError&) {
    require(false);  // the validator accepted a schedule the simulator cannot run
  } catch (const std::invalid_argument&) {
    require(false);
  }
  return 0;
}
