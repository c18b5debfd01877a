// Test helper: two Timelines equal in every field of every record (strings by value), with at
// most a few span mismatches reported so a broken large trace does not flood the log.
#pragma once

#include <gtest/gtest.h>

#include "traces/timeline.h"

namespace meshscope::traces::testing {

inline void expect_same_timeline(const Timeline& a, const Timeline& b) {
  ASSERT_EQ(a.devices.size(), b.devices.size());
  for (size_t d = 0; d < a.devices.size(); ++d) {
    const Device& x = a.devices[d];
    const Device& y = b.devices[d];
    EXPECT_EQ(x.rank, y.rank) << "device " << d;
    EXPECT_EQ(x.name, y.name) << "device " << d;
    EXPECT_EQ(x.coord, y.coord) << "device " << d;
    ASSERT_EQ(x.lanes.size(), y.lanes.size()) << "device " << d;
    for (size_t l = 0; l < x.lanes.size(); ++l) {
      EXPECT_EQ(x.lanes[l].name, y.lanes[l].name) << "device " << d << " lane " << l;
      EXPECT_EQ(x.lanes[l].kind, y.lanes[l].kind) << "device " << d << " lane " << l;
    }
  }
  ASSERT_EQ(a.spans.size(), b.spans.size());
  size_t mismatches = 0;
  for (size_t i = 0; i < a.spans.size() && mismatches < 5; ++i) {
    const Span& x = a.spans[i];
    const Span& y = b.spans[i];
    const bool same = x.begin_ns == y.begin_ns && x.end_ns == y.end_ns && x.bytes == y.bytes &&
                      x.flops == y.flops && a.span_name(x) == b.span_name(y) &&
                      x.microbatch == y.microbatch && x.device == y.device && x.lane == y.lane &&
                      x.stage == y.stage && x.kind == y.kind && x.phase == y.phase;
    if (!same) {
      ++mismatches;
      ADD_FAILURE() << "span " << i << " differs: \"" << a.span_name(x) << "\" kind "
                    << name(x.kind) << " [" << x.begin_ns << ", " << x.end_ns << ") vs \""
                    << b.span_name(y) << "\" kind " << name(y.kind) << " [" << y.begin_ns << ", "
                    << y.end_ns << ")";
    }
  }
  ASSERT_EQ(a.flows.size(), b.flows.size());
  for (size_t i = 0; i < a.flows.size(); ++i) {
    EXPECT_EQ(a.flows[i].from, b.flows[i].from) << "flow " << i;
    EXPECT_EQ(a.flows[i].to, b.flows[i].to) << "flow " << i;
    EXPECT_EQ(a.strings.get(a.flows[i].category), b.strings.get(b.flows[i].category))
        << "flow " << i;
  }
  ASSERT_EQ(a.counters.size(), b.counters.size());
  for (size_t c = 0; c < a.counters.size(); ++c) {
    EXPECT_EQ(a.counters[c].device, b.counters[c].device) << "counter " << c;
    EXPECT_EQ(a.counters[c].name, b.counters[c].name) << "counter " << c;
    ASSERT_EQ(a.counters[c].samples.size(), b.counters[c].samples.size()) << "counter " << c;
    for (size_t s = 0; s < a.counters[c].samples.size(); ++s) {
      EXPECT_EQ(a.counters[c].samples[s].t_ns, b.counters[c].samples[s].t_ns);
      EXPECT_EQ(a.counters[c].samples[s].value, b.counters[c].samples[s].value);
    }
  }
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (size_t s = 0; s < a.steps.size(); ++s) {
    EXPECT_EQ(a.steps[s].begin_ns, b.steps[s].begin_ns);
    EXPECT_EQ(a.steps[s].end_ns, b.steps[s].end_ns);
  }
  EXPECT_EQ(a.metadata, b.metadata);
  EXPECT_EQ(a.run, b.run);
  ASSERT_EQ(a.collectives.size(), b.collectives.size());
  for (size_t i = 0; i < a.collectives.size(); ++i) {
    EXPECT_EQ(a.collectives[i].span, b.collectives[i].span) << "collective " << i;
    EXPECT_EQ(a.collectives[i].collective, b.collectives[i].collective) << "collective " << i;
  }
  ASSERT_EQ(a.waits.size(), b.waits.size());
  for (size_t i = 0; i < a.waits.size(); ++i) {
    EXPECT_EQ(a.waits[i].span, b.waits[i].span) << "wait " << i;
    EXPECT_EQ(a.waits[i].wait_ns, b.waits[i].wait_ns) << "wait " << i;
  }
  ASSERT_EQ(a.origins.size(), b.origins.size());
  for (size_t i = 0; i < a.origins.size(); ++i) {
    const SpanOrigin& x = a.origins[i];
    const SpanOrigin& y = b.origins[i];
    EXPECT_EQ(x.span, y.span) << "origin " << i;
    EXPECT_EQ(x.stream, y.stream) << "origin " << i;
    EXPECT_EQ(x.correlation, y.correlation) << "origin " << i;
    EXPECT_EQ(a.strings.get(x.category), b.strings.get(y.category)) << "origin " << i;
    EXPECT_EQ(a.origin_args.get(x.args), b.origin_args.get(y.args)) << "origin " << i;
  }
}

}  // namespace meshscope::traces::testing
