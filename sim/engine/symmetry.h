// Identical replicas simulated once: when every dp replica and tp rank runs the program of its
// (dp 0, tp 0) representative, on links and collectives that cost the same, the simulation of the
// representatives alone gives exactly the full result (the tests check this where both run).
#pragma once

#include "sim/engine/engine.h"

namespace meshscope::engine {

// The global rank that stands for `rank`: same pp coordinate, dp 0, tp 0.
int representative_of(const mesh::MeshShape& shape, int rank);

// True when every rank's actions equal its representative's (peers shifted alike), its transfers
// use the same link tiers and its collectives cost the same.
bool replicas_symmetric(const EngineInput& input);

struct SymmetricOptions {
  bool expand_timeline = false;  // copy the representatives' spans to every replica's device
};

// Simulates only the representatives (mesh dp=1 x pp x tp=1); `ranks` in the result still has one
// entry per rank of the full mesh. Throws std::invalid_argument when !replicas_symmetric(input).
EngineResult simulate_symmetric(const EngineInput& input, const SymmetricOptions& options = {});

// Runs an input that already holds only the representatives (mesh dp=1 x pp x tp=1; its
// tier_of and collective_ns price them as the full mesh's ranks) and reports it as the full mesh:
// `ranks` per full rank, the Timeline's devices renamed (or expanded) to full-mesh ranks.
EngineResult simulate_representatives(const EngineInput& reduced, const mesh::MeshShape& full,
                                      const SymmetricOptions& options = {});

// Copies a representatives-only Timeline onto every device of `full`.
traces::Timeline expand_replicas(const traces::Timeline& reduced, const mesh::MeshShape& full);

}  // namespace meshscope::engine
