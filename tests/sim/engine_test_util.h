// Engine input shared by the simulator tests: equal stages and free communication.
#pragma once

#include <cstdint>

#include "sim/engine/engine.h"
#include "sim/schedule/schedule.h"

namespace meshscope::engine::testing {

// Equal stages, free communication: F, I, W per stage (B = I + W).
inline EngineInput equal_stages(const schedule::Schedule& s, int64_t f, int64_t i, int64_t w) {
  EngineInput in;
  in.schedule = &s;
  in.stages.assign(s.num_stages, StageTiming{});
  for (StageTiming& t : in.stages) {
    t.forward_ns = f;
    t.input_grad_ns = i;
    t.weight_grad_ns = w;
    t.backward_ns = i + w;
    t.activation_bytes = 100;
    t.weight_grad_bytes = 40;
  }
  in.links = {LinkSpec{1e30, 0}};
  return in;
}

}  // namespace meshscope::engine::testing
