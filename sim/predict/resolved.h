// Everything `simulate` prices once per configuration (Resolved: hardware, workload, per-stage
// times, the generator's config) and the prices of the full mesh's links and collectives by global
// rank (FullMeshPrices). Internal to sim/predict (simulate.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "sim/cost/calibration.h"
#include "sim/cost/compute_model.h"
#include "sim/cost/framework.h"
#include "sim/cost/hardware.h"
#include "sim/cost/topology.h"
#include "sim/engine/engine.h"
#include "sim/predict/config.h"
#include "sim/predict/workload_costs.h"
#include "sim/schedule/generators.h"

namespace meshscope::predict {

// Everything priced once per configuration. Not copyable: the models hold references into it.
struct Resolved {
  // Throws std::invalid_argument (a config the model cannot take, a calibration of other
  // hardware) or std::runtime_error (unknown hardware or framework).
  Resolved(const PredictConfig& c, const cost::Calibration* calibration);
  Resolved(const Resolved&) = delete;
  Resolved& operator=(const Resolved&) = delete;

  // The catalog entry parse_config read (else the catalog's), with the framework's attention
  // efficiency, the config's GPUs per node, and `sustained` that of the run's slowest GPU
  // (cost::slowest_gpu_share).
  static cost::Hardware hardware_for(const PredictConfig& c, const cost::Framework& fw);

  const PredictConfig& config;
  const cost::Calibration* calibration;
  const cost::Framework fw;
  const cost::Hardware hw;
  const WorkloadCosts w;
  const int num_stages;
  const cost::ComputeModel compute;
  const cost::Topology topo;
  const CommPricer pricer;
  const mesh::Mesh mesh;
  schedule::GeneratorConfig generator;
  std::vector<int64_t> param_bytes;  // per stage, one tp rank's parameters in the compute precision
  // ... and their gradients as the dp reductions move them: in the framework's reduction
  // precision (grad_reduce_bytes, options.grad_reduce_dtype; Megatron's fp32 grads), so that the
  // actions and the trace carry the bytes the links are priced for.
  std::vector<int64_t> grad_bytes;
  std::vector<engine::StageTiming> timings;
};

// What one collective action costs. `wire_s`: its time on the links (the collective model,
// ZeRO-3's layer-by-layer split included). A data-parallel collective the framework overlaps with
// compute (framework.h) leaves `exposed_s` of it outside the compute it hides behind when its
// stream is free, and costs the step `charged_s`: that, plus the compute the hidden part slows
// through the SMs it holds (catalog collective_ctas). The engine runs most such collectives for
// wire_s, overlapped (engine::CollectiveOverlap), so that those queued behind each other hide
// only what their stream had time for: a gradient reduction begins up to `lead_s` (its stage's
// backward) before its cursor reaches it and ends no sooner than `tail_s` (its last layer's
// share) after (item 53); a ZeRO-3 gather lets the compute that uses it start once what that
// compute cannot hide has arrived (item 54), which the engine works out from that compute over
// `hide_layers` (item 55; release_s, its charged_s, is the price against its stage's forward).
// ZeRO-1 and 2's gather after the step runs for charged_s. lead_s, release_s < 0: not overlapped.
// Any other collective is priced in full: wire_s, exposed_s and charged_s equal. exposed_s and
// charged_s are the Breakdown's figures.
struct CollectivePrice {
  double wire_s = 0;
  double exposed_s = 0;
  double charged_s = 0;
  double lead_s = -1;
  double tail_s = 0;
  double charge_share = 0;
  double release_s = -1;
  int hide_layers = 0;  // a ZeRO-3 gather: the engine prices its release against its use (item 55)
};

// What a data-parallel collective leaves exposed when the framework overlaps it with compute: all
// of it beyond the `window_s` of compute it hides behind, and at least one layer's share, which
// has nothing to hide behind (the first layer's gradients are reduced after the backward has
// ended; the first layer's parameters must be gathered before the forward can start).
double exposed_seconds(double seconds, double window_s, int layers);

// Prices of the full mesh's links and collectives, by global rank. A collective's price depends
// on its group's span over nodes, which is the same for every member of one group: spans are
// computed once per group (O(group size) each, so O(ranks) for all groups of a kind).
class FullMeshPrices {
 public:
  explicit FullMeshPrices(const Resolved& r) : r_(r) {}

  int tier(int a, int b) const { return r_.topo.same_node(a, b) ? 0 : 1; }

  // charged_s in ns, or wire_s for a collective the engine overlaps (CollectivePrice).
  int64_t collective_ns(int rank, const schedule::Action& a);
  engine::CollectiveOverlap collective_overlap(int rank, const schedule::Action& a);
  CollectivePrice collective_price(int rank, const schedule::Action& a);
  // The share of a GPU's SMs the collective holds while the engine runs compute beside it
  // (engine::EngineInput::collective_sm_share): catalog collective_ctas over compute_units, or 0
  // when its price already charges them (a data-parallel collective priced as hidden behind its
  // stage's compute) or the device has no such figure.
  double collective_sm_share(int rank, const schedule::Action& a);

  // A collective keeps its members' network ports busy when its group spans nodes, else their
  // NVLink ports: point-to-point transfers then share them.
  int collective_tier(int rank, const schedule::Action& a);

  // The first member of `rank`'s group of kind g: every member's group span is that member's.
  int group_leader(mesh::GroupKind g, int rank) const;

 private:
  cost::GroupSpan hybrid_span(const schedule::Action& a, const cost::GroupSpan& dp) const;
  cost::GroupSpan span_of(mesh::GroupKind g, int rank);

  const Resolved& r_;
  std::unordered_map<uint64_t, cost::GroupSpan> spans_;
  std::map<std::tuple<int, int, int64_t, int, int, int, int>, CollectivePrice> prices_;
};

}  // namespace meshscope::predict
