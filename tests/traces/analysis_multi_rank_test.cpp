// Critical path, stragglers and kernel breakdown on real multi-rank traces: the torch pipelining
// jobs of tests/fixtures/torch (4 ranks, torch 2.15 on CPU/gloo, one Kineto file per rank).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <numeric>
#include <set>
#include <string>

#include "traces/analysis_critical_path.h"
#include "traces/analysis_kernels.h"
#include "traces/analysis_stragglers.h"
#include "traces/import/load_trace.h"

namespace meshscope::traces {
namespace {

namespace fs = std::filesystem;

Timeline load_job(const std::string& schedule) {
  const fs::path dir = fs::path(MESHSCOPE_SOURCE_DIR) / "tests/fixtures/torch" / schedule;
  const std::vector<fs::path> paths{dir};
  return load_traces(paths);
}

class MultiRankJob : public ::testing::TestWithParam<std::string> {};

TEST_P(MultiRankJob, CriticalPathSharesAddUpToTheStepAndCrossRanksOverTransfers) {
  const Timeline t = load_job(GetParam());
  const auto paths = critical_paths(t);
  ASSERT_FALSE(paths.empty());
  for (const CriticalPath& p : paths) {
    ASSERT_GT(p.length_ns(), 0);
    // The path ends where the window's last device work ends and starts inside the window.
    int64_t last_end = 0;
    for (const Span& s : t.spans) {
      if (is_device_activity(s.kind) && s.end_ns <= p.window.end_ns &&
          s.end_ns > p.window.begin_ns) {
        last_end = std::max(last_end, s.end_ns);
      }
    }
    EXPECT_EQ(p.end_ns, last_end);
    EXPECT_GE(p.begin_ns, p.window.begin_ns);
    // What of the step lies outside the path is said with it.
    const std::string text = format_critical_path({p}, t);
    EXPECT_EQ(text.find("of the step's") != std::string::npos,
              p.begin_ns > p.window.begin_ns || p.end_ns < p.window.end_ns)
        << text;
    // Per kind and per rank the shares add up to the path's length, none beyond it.
    const int64_t kinds = std::accumulate(p.by_kind.begin(), p.by_kind.end(), int64_t{0});
    EXPECT_EQ(kinds, p.length_ns());
    int64_t ranks = 0;
    for (const auto& [rank, ns] : p.by_rank) {
      EXPECT_GE(ns, 0) << "rank " << rank;
      EXPECT_LE(ns, p.length_ns()) << "rank " << rank;
      ranks += ns;
    }
    EXPECT_EQ(ranks, p.length_ns());
    int64_t charged = 0;
    for (const PathStep& s : p.steps) charged += s.charged_ns + s.wait_ns;
    EXPECT_EQ(charged, p.length_ns());
    // Each step's charged part lies inside its span (the viewer outlines that part): a recv
    // posted long before its send is on the path only from the send's end.
    const std::vector<Interval> on_path = charged_intervals(p);
    ASSERT_EQ(on_path.size(), p.steps.size());
    for (size_t k = 0; k < on_path.size(); ++k) {
      const Span& s = t.spans[p.steps[k].span];
      EXPECT_GE(on_path[k].begin_ns, s.begin_ns) << t.span_name(s);
      EXPECT_LE(on_path[k].end_ns, s.end_ns) << t.span_name(s);
    }
    EXPECT_EQ(on_path.back().end_ns, p.end_ns);
    // The step of a pipeline is decided on more than one rank, through send -> recv flows.
    EXPECT_GE(p.by_rank.size(), 2u);
    size_t transfers = 0;
    for (size_t k = 0; k + 1 < p.steps.size(); ++k) {
      const Span& a = t.spans[p.steps[k].span];
      const Span& b = t.spans[p.steps[k + 1].span];
      const bool flow = std::any_of(t.flows.begin(), t.flows.end(), [&](const Flow& f) {
        return f.from == p.steps[k].span && f.to == p.steps[k + 1].span && is_transfer_flow(t, f);
      });
      if (p.steps[k].via == PathStep::Via::kFlow && flow) {
        EXPECT_NE(t.devices[a.device].rank, t.devices[b.device].rank);
        ++transfers;
      }
    }
    EXPECT_GE(transfers, 1u) << "the path never followed a send into its recv";
  }
}

TEST_P(MultiRankJob, FirstForwardRecvOfEachRankWaitsForTheRankBefore) {
  const Timeline t = load_job(GetParam());
  const StragglerAnalysis a = stragglers(t);
  ASSERT_FALSE(a.transfers.empty());
  // Per receiving rank, its earliest recv.
  std::map<int, const TransferWait*> first;
  for (const TransferWait& w : a.transfers) {
    const int r = t.devices[w.receiver].rank;
    if (t.spans[w.recv].phase != Phase::kForward) continue;
    if (!first.count(r) || t.spans[w.recv].begin_ns < t.spans[first[r]->recv].begin_ns) {
      first[r] = &w;
    }
  }
  // Ranks 1..3 receive activations; rank 0 too where stages loop (its stage 4 after rank 3's 3).
  ASSERT_GE(first.size(), 3u);
  EXPECT_EQ(first.count(0), GetParam() == "Interleaved1F1B" ? 1u : 0u);
  for (const auto& [rank, w] : first) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    const int sender = t.devices[w->sender].rank;
    EXPECT_EQ(sender, (rank + 3) % 4);
    // The sender had to run its first forward before sending it: the recv posted earlier
    // waited at least that long, and the sender is the straggler.
    int64_t first_forward = 0;
    int64_t first_begin = INT64_MAX;
    for (const Span& s : t.spans) {
      if (t.devices[s.device].rank == sender && s.phase == Phase::kForward &&
          s.kind == SpanKind::kCompute && s.begin_ns < first_begin) {
        first_begin = s.begin_ns;
        first_forward = s.duration_ns();
      }
    }
    ASSERT_GT(first_forward, 0);
    const int64_t gap = t.spans[w->send].begin_ns - t.spans[w->recv].begin_ns;
    EXPECT_EQ(w->wait_ns, std::max<int64_t>(0, gap));
    if (GetParam() != "Interleaved1F1B") {
      // Without loops a rank has nothing to do before its first recv: it posts it at once and
      // waits there for the rank before to finish its first forward.
      EXPECT_GE(w->wait_ns, first_forward);
    }
  }
  // Per device, what it waited for equals the sum of its recvs' waits.
  for (const StragglerDevice& d : a.devices) {
    int64_t waited = 0;
    for (const TransferWait& w : a.transfers) {
      if (w.receiver == d.device) waited += w.wait_ns;
    }
    EXPECT_EQ(d.recv_waited_ns, waited);
  }
}

TEST_P(MultiRankJob, KernelBreakdownCoversEveryRanksDeviceWork) {
  const Timeline t = load_job(GetParam());
  const auto all = kernel_breakdown(t, 1000000);
  std::set<int> ranks;
  for (const DeviceKernels& d : all) {
    SCOPED_TRACE(d.name);
    ranks.insert(d.rank);
    int64_t expected = 0;  // Σ of the device's device-activity spans, counted here
    for (const Span& s : t.spans) {
      if (s.device == d.device && is_device_activity(s.kind)) expected += s.duration_ns();
    }
    EXPECT_EQ(d.kernel_time_ns, expected);
    EXPECT_EQ(std::accumulate(d.class_ns.begin(), d.class_ns.end(), int64_t{0}), expected);
    double shares = 0;
    int64_t total = 0;
    for (size_t i = 0; i < d.top.size(); ++i) {
      shares += d.top[i].share;
      total += d.top[i].total_ns;
      if (i > 0) {
        EXPECT_GE(d.top[i - 1].total_ns, d.top[i].total_ns);
      }
    }
    EXPECT_EQ(total, expected);
    EXPECT_NEAR(shares, 1.0, 1e-9);
  }
  EXPECT_EQ(ranks, (std::set<int>{0, 1, 2, 3}));
  // The top-3 cut keeps the 3 largest of the full list.
  const auto top3 = kernel_breakdown(t, 3);
  ASSERT_EQ(top3.size(), all.size());
  for (size_t d = 0; d < all.size(); ++d) {
    ASSERT_LE(top3[d].top.size(), 3u);
    for (size_t i = 0; i < top3[d].top.size(); ++i) {
      EXPECT_EQ(top3[d].top[i].name, all[d].top[i].name);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Torch, MultiRankJob,
                         ::testing::Values("1F1B", "GPipe", "Interleaved1F1B"));

}  // namespace
}  // namespace meshscope::traces
