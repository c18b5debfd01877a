// libFuzzer target: any bytes as a torch.distributed.pipelining job's traces, through what
// `predict --from-trace` does with them: the input is cut at each "\n@@RANK@@\n" into up to 8
// files, one per rank (traces::load_traces_bytes: each file's import, then the merge that pairs
// sends with receives across ranks), the schedule recovered from the ranks' actions
// (predict::recover_schedule), the job analysed (traces::analyze) and replayed with its measured
// costs, with every pipeline family beside it (predict::replay_trace); its export, read back as a
// job, must be the same job. Only the errors the command reports may come out: ImportError,
// RecoveryError, TraceReplayError. A crash, a sanitizer report, another exception, a broken
// promise (a trap), a hang or runaway memory is a bug. Seeded with the torch
// jobs of tests/fixtures/torch, their ranks' files joined (scripts/ci-fuzz.sh).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "sim/predict/recovered_schedule.h"
#include "sim/predict/trace_replay.h"
#include "traces/analysis.h"
#include "traces/chrome_export.h"
#include "traces/import/load_trace.h"
#include "traces/import/torch_pipeline.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace meshscope;
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  const std::vector<traces::NamedTraceBytes> files = fuzz::split_ranks(all, 8, ".json");
  traces::ImportOptions options;
  options.max_event_bytes = int64_t{1} << 20;  // keep each run small
  options.max_inflated_bytes = int64_t{64} << 20;
  try {
    const traces::Timeline t = traces::load_traces_bytes(files, options);
    fuzz::check_timeline(t);
    const auto orders = traces::importer::torch_action_orders(t);
    // Its export read back as a job's files are read (`predict --from-trace` of a converted
    // job) is the job: its devices, its flows once, its ranks' actions.
    const std::string exported = traces::export_chrome_json(t);
    const traces::NamedTraceBytes one{"export.json", exported};
    const traces::Timeline back = traces::load_traces_bytes({&one, 1}, options);
    fuzz::require(back.devices.size() == t.devices.size() && back.flows.size() == t.flows.size());
    for (size_t d = 0; d < t.devices.size(); ++d)
      fuzz::require(back.devices[d].rank == t.devices[d].rank &&
                    back.devices[d].coord == t.devices[d].coord);
    fuzz::require(traces::importer::torch_action_orders(back) == orders);
    if (orders.empty()) return 0;
    const predict::RecoveredSchedule ran =
        predict::recover_schedule(orders, traces::importer::torch_pipeline_groups(t), "fuzz");
    const traces::TimelineAnalysis a = traces::analyze(t);
    const predict::TraceReplay replay = predict::replay_trace(t, a, ran, {}, "fuzz");
    for (const predict::TraceReplayRow& row : replay.rows)
      fuzz::require(row.step_ns ? *row.step_ns >= 0 : !row.error.empty());
  } catch (const traces::ImportError&) {
  } catch (const predict::RecoveryError&) {
  } catch (const predict::TraceReplayError&) {
  }
  return 0;
}
