// The viewer's per-frame view logic on a 10M-span synthetic trace, without ImGui: LOD folding of
// every row at zoom levels from the whole run to nanoseconds, the replay's per-device lookups and
// find. The whole frame (ImGui included) is measured by `meshscope-gui --bench`.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdlib>
#include <memory>

#include "gui/view/find.h"
#include "gui/view/lod.h"
#include "gui/view/mesh_layout.h"
#include "gui/view/synthetic.h"
#include "gui/view/track_index.h"
#include "traces/analysis.h"

namespace {

using namespace meshscope;

struct Fixture {
  traces::Timeline timeline;
  std::unique_ptr<gui::TrackIndex> index;
};

// Built once: 10M spans (MESHSCOPE_BENCH_SPANS overrides) with derived idle spans, as the viewer
// holds them.
const Fixture& fixture() {
  static const Fixture f = [] {
    Fixture x;
    gui::SyntheticOptions o;
    o.dp = 4;
    o.pp = 8;
    o.microbatches = 32;
    const char* env = std::getenv("MESHSCOPE_BENCH_SPANS");
    o.steps = gui::steps_for_spans(o, env ? std::strtoull(env, nullptr, 10) : 10'000'000);
    x.timeline = gui::make_synthetic_pipeline(o);
    traces::add_idle_spans(x.timeline);
    x.timeline.sort_spans();
    x.index = std::make_unique<gui::TrackIndex>(x.timeline);
    return x;
  }();
  return f;
}

// Folds every row (all 96, not just those a window shows) at zoom 10^range(0) over 1920 px;
// range(1) = 0 turns the block summaries off, to measure what they save.
void BM_BuildBoxesAllRows(benchmark::State& state) {
  const Fixture& f = fixture();
  gui::TimeAxis axis;
  axis.set_width_px(1920);
  const auto ext = f.timeline.extent();
  axis.set_bounds(ext.begin_ns, ext.end_ns);
  axis.zoom_at(1920 * 0.37, std::pow(10.0, static_cast<double>(state.range(0))));
  std::vector<gui::Box> boxes;
  size_t total = 0;
  for (auto _ : state) {
    for (const gui::Row& row : f.index->rows()) {
      boxes.clear();
      gui::build_boxes(f.timeline, row, axis, gui::LodOptions{3.0, state.range(1) != 0}, boxes);
      total += boxes.size();
    }
    benchmark::DoNotOptimize(total);
  }
  state.counters["boxes_per_frame"] =
      static_cast<double>(total) / static_cast<double>(state.iterations());
  state.counters["spans"] = static_cast<double>(f.timeline.spans.size());
}
BENCHMARK(BM_BuildBoxesAllRows)
    ->ArgsProduct({benchmark::CreateDenseRange(0, 6, 1), {1, 0}})
    ->ArgNames({"zoom_log10", "summaries"})
    ->Unit(benchmark::kMillisecond);

// What the mesh view does per frame: the state of every device at one instant.
void BM_DeviceStateAllDevices(benchmark::State& state) {
  const Fixture& f = fixture();
  const auto ext = f.timeline.extent();
  int64_t t = ext.begin_ns;
  const int64_t step = (ext.end_ns - ext.begin_ns) / 997;
  for (auto _ : state) {
    for (uint16_t d = 0; d < f.timeline.devices.size(); ++d) {
      benchmark::DoNotOptimize(gui::device_state_at(f.timeline, *f.index, d, t));
    }
    t = t + step < ext.end_ns ? t + step : ext.begin_ns;
  }
}
BENCHMARK(BM_DeviceStateAllDevices)->Unit(benchmark::kMicrosecond);

// Find: one scan of every span (run once per query, not per frame).
void BM_FindMicrobatch(benchmark::State& state) {
  const Fixture& f = fixture();
  const gui::FindQuery q = gui::parse_find_query("F mb 3");
  std::vector<uint32_t> out;
  for (auto _ : state) {
    out.clear();
    gui::find_spans(f.timeline, q, 1'000'000, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["matches"] = static_cast<double>(out.size());
}
BENCHMARK(BM_FindMicrobatch)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
