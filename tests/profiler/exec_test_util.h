// Helpers shared by the executor tests: generate a schedule, run it on the cpu backend, compare
// with the single-device reference.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <stdexcept>
#include <string>

#include "profiler/exec/equivalence.h"
#include "profiler/exec/executor.h"
#include "profiler/exec/reference.h"
#include "profiler/exec/workload_schedule.h"
#include "sim/model/workload_cost.h"
#include "sim/schedule/generators.h"

namespace meshscope::exec::testing {

inline schedule::GeneratorConfig generator_config(schedule::Family f, mesh::MeshShape shape,
                                                  int microbatches, int virtual_stages) {
  schedule::GeneratorConfig g;
  g.family = f;
  g.mesh = shape;
  g.microbatches = microbatches;
  g.virtual_stages = virtual_stages;
  return g;
}

inline schedule::Schedule make_schedule(schedule::Family f, mesh::MeshShape shape, int microbatches,
                                        int virtual_stages = 1) {
  return schedule::generate(generator_config(f, shape, microbatches, virtual_stages));
}

// The same with the transfer and gradient sizes of `spec`'s workload written into the actions, as
// the CLI generates them (the executor checks them against the workload).
inline schedule::Schedule make_schedule_for(const model::WorkloadSpec& spec, schedule::Family f,
                                            mesh::MeshShape shape, int microbatches,
                                            int virtual_stages = 1) {
  return generate_for_workload(generator_config(f, shape, microbatches, virtual_stages), spec);
}

// The deep MLP the executor tests run: 8 blocks of h = 16, batch 16, learning rate 0.1.
inline model::WorkloadSpec small_mlp_spec(uint64_t seed) {
  model::WorkloadSpec s;
  s.kind = model::WorkloadKind::kMlp;
  s.layers = 8;
  s.hidden = 16;
  s.batch = 16;
  s.lr = 0.1f;
  s.seed = seed;
  return s;
}

inline RunConfig cpu_config(const schedule::Schedule& s, const model::WorkloadSpec& spec, int steps,
                            double timeout_s = 30) {
  RunConfig c;
  c.workload = spec;
  c.schedule = s;
  c.backend = runtime::BackendKind::kCpu;
  c.steps = steps;
  c.timeout_s = timeout_s;
  return c;
}

inline RunResult run_cpu(const schedule::Schedule& s, const model::WorkloadSpec& spec, int steps,
                         double timeout_s = 30) {
  return run(cpu_config(s, spec, steps, timeout_s));
}

// Loss of every step and every weight and bias within `tol` relative of the reference.
inline void expect_equivalent(const RunResult& got, const ReferenceResult& want,
                              const std::string& what, double tol = 1e-5) {
  ASSERT_EQ(got.losses.size(), want.losses.size()) << what;
  for (size_t s = 0; s < want.losses.size(); ++s) {
    EXPECT_NEAR(got.losses[s], want.losses[s], tol * std::abs(want.losses[s]))
        << what << ": loss of step " << s;
  }
  ASSERT_EQ(got.weights.size(), want.weights.size()) << what;
  for (size_t i = 0; i < want.weights.size(); ++i) {
    ASSERT_EQ(got.weights[i].w.size(), want.weights[i].w.size())
        << what << " " << want.weights[i].name;
    EXPECT_LE(relative_error(got.weights[i].w, want.weights[i].w), tol)
        << what << ": weights of " << want.weights[i].name;
    EXPECT_LE(relative_error(got.weights[i].b, want.weights[i].b), tol)
        << what << ": bias of " << want.weights[i].name;
  }
}

// Calls `f`, which must throw std::invalid_argument with every one of `needles` in its message;
// `what` names the case when it does not throw.
template <class F>
void expect_invalid_argument(F&& f, std::initializer_list<std::string> needles,
                             const std::string& what) {
  try {
    f();
    ADD_FAILURE() << what << " accepted";
  } catch (const std::invalid_argument& e) {
    for (const std::string& needle : needles)
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

}  // namespace meshscope::exec::testing
