// Resolving a configuration once and pricing the full mesh's collectives (resolved.h).
#include "sim/predict/resolved.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "sim/cost/collective_model.h"
#include "sim/predict/zero.h"

namespace meshscope::predict {
namespace {

// Bytes read and written per parameter by one optimizer update: SGD 12; Adam 28 in one fused pass,
// or what the framework's unfused update and gradient clipping move (optimizer_step_bytes).
double update_bytes(const PredictConfig& c, const cost::Framework& fw) {
  if (c.optimizer != Optimizer::kAdam) return 12;
  const double bytes = fw.optimizer_step_bytes.at(c.precision);
  return bytes > 0 ? bytes : 28;
}

// One optimizer update of `params` parameters: a memory-bound pass, or, when a profile calibrated
// the optimizer phase, its fitted rate. The executor's STEP is SGD counted as 2 FLOPs per parameter
// over 12 bytes moved; another optimizer scales by the bytes it moves.
double optimizer_seconds(const PredictConfig& c, const cost::Framework& fw, double params,
                         const cost::ComputeModel& compute, const cost::Calibration* calibration) {
  if (calibration != nullptr) {
    const cost::PhaseFit& f = calibration->phase(traces::Phase::kOptimizer);
    if (f.flops_per_s > 0)
      return f.overhead_ns * 1e-9 + 2 * params / f.flops_per_s * update_bytes(c, fw) / 12;
  }
  return compute.stream_seconds(params * update_bytes(c, fw));
}

// The share of the SMs a running collective's thread blocks hold (catalog collective_ctas).
double sm_share(const cost::Hardware& hw) {
  return hw.compute_units > 0 ? static_cast<double>(hw.collective_ctas) / hw.compute_units : 0;
}

}  // namespace

double exposed_seconds(double seconds, double window_s, int layers) {
  return std::min(seconds, std::max(seconds / std::max(1, layers), seconds - window_s));
}

Resolved::Resolved(const PredictConfig& c, const cost::Calibration* cal)
    : config(c),
      calibration(cal),
      fw(framework_of(c)),
      hw(hardware_for(c, fw)),
      w(workload_costs(c, fw)),
      num_stages(static_cast<int>(w.stages.size())),
      compute(hw, c.precision, cal, fw.flash),
      topo(c.mesh, c.cp, hw.devices_per_node, c.placement),
      pricer(hw, topo, c.ep, cal),
      mesh(c.mesh) {
  // Fitted rates replace the catalog's: those of another device would silently mean nothing.
  if (cal != nullptr && !cal->hardware.empty() && cal->hardware != hw.name)
    throw std::invalid_argument("calibration: fitted on '" + cal->hardware +
                                "' (calibrate --hardware), the config runs on '" + hw.name + "'");
  // Its scales are against the op model at the format it was fitted in: applied to another they
  // would be off by the ratio of the two peaks (2x between cpu-local's fp32 and bf16).
  if (cal != nullptr && !cal->precision.empty() && cal->precision != cost::name(c.precision))
    throw std::invalid_argument("calibration: fitted in " + cal->precision +
                                " (calibrate --precision), the config computes in " +
                                std::string(cost::name(c.precision)) + " (options.precision)");
  // A rate past cost::kMaxRateOverPeak (which calibrate refuses to write) comes from a file
  // edited by hand.
  if (cal != nullptr) {
    double peak = hw.peak(c.precision);
    if (peak <= 0) peak = hw.peak(cost::Precision::kFp32);
    for (size_t i = 0; i < cal->phases.size(); ++i) {
      const double rate = cal->phases[i].flops_per_s;
      if (peak > 0 && rate > cost::kMaxRateOverPeak * peak) {
        char what[96];
        std::snprintf(what, sizeof what, "%.4g GFLOP/s, %.3g times %s's peak", rate / 1e9,
                      rate / peak, hw.name.c_str());
        throw std::invalid_argument("calibration (--calibration): key 'compute." +
                                    std::string(traces::kPhaseNames[i]) + ".flops_per_s': " + what +
                                    ": no device computes past its peak");
      }
    }
  }
  // A config built in code (a search's mesh, an alternative's stage) as a parsed one would be.
  if (const std::string why = zero_refusal(c, fw); !why.empty())
    throw std::invalid_argument("options.zero: " + why);
  const int e = cost::element_bytes(c.precision);
  generator.family = c.schedule;
  generator.mesh = c.mesh;
  generator.microbatches = c.microbatches();
  generator.virtual_stages = c.virtual_stages;
  generator.reduce_beyond_mesh = c.cp > 1;
  param_bytes.resize(num_stages);
  grad_bytes.resize(num_stages);
  const double reduce_bytes = fw.grad_reduce_bytes.at(c.precision);
  for (int s = 0; s < num_stages; ++s) {
    generator.activation_bytes.push_back(w.stages[s].output_bytes);
    const int64_t elements = w.dense_parameters[s] + w.expert_parameters[s];
    param_bytes[s] = elements * e;
    grad_bytes[s] = reduce_bytes > 0 ? static_cast<int64_t>(std::llround(elements * reduce_bytes))
                                     : param_bytes[s];
    generator.gradient_bytes.push_back(grad_bytes[s]);
    // Each rank updates its shard: dense states over the ZeRO shards, an expert's over the shards
    // of its own replicas (zero_shards / ep), as device_memory counts them.
    const double shards = c.zero >= 1 ? c.zero_shards() : 1;
    const double expert_shards = c.zero >= 1 ? std::max(1.0, shards / std::max(1, c.ep)) : 1;
    const double opt_s = optimizer_seconds(
        c, fw, w.dense_parameters[s] / shards + w.expert_parameters[s] / expert_shards, compute,
        cal);
    timings.push_back(stage_timing(w.stages[s], compute, pricer, opt_s));
    add_parameter_passes(
        timings.back(), c.zero, c.data_parallel(),
        static_cast<double>(w.dense_parameters[s] + w.expert_parameters[s]), c.precision, fw,
        compute,
        shards_once_a_step(c.zero, c.data_parallel(), c.mesh.pp, fw) ? c.microbatches() : 0);
  }
}

cost::Hardware Resolved::hardware_for(const PredictConfig& c, const cost::Framework& fw) {
  // The entry parse_config read, unless the caller changed the gpu since.
  cost::Hardware hw =
      c.hardware.entry && c.hardware.gpu == c.gpu ? *c.hardware.entry : cost::find_hardware(c.gpu);
  const cost::AttentionRates rates =
      cost::attention_rates(hw, fw.flash, fw.attention_forward_speedup);
  hw.efficiency.attention = rates.forward;
  hw.efficiency.attention_backward = rates.backward;
  // Every synchronisation waits for the slowest member: the run computes at its slowest GPU's
  // sustained rate (catalog `sustained_spread`).
  hw.efficiency.sustained *= cost::slowest_gpu_share(hw.efficiency, c.gpus());
  if (c.gpus_per_node > 0) {
    hw.devices_per_node = c.gpus_per_node;
    hw.nics_per_node = std::min(hw.nics_per_node, c.gpus_per_node);
  }
  if (!c.nvls) {  // NCCL_NVLS_ENABLE=0: every all-reduce a ring or a tree
    hw.intra_node.nvls_bus_bandwidth_bytes_per_s = 0;
    hw.inter_node.nvls_bus_bandwidth_bytes_per_s = 0;
  }
  if (c.network_gbps > 0) {
    // A node's stated network, whatever its NICs: each GPU's share of it, so that a group with
    // k members per node moves k shares (the collective model's min(k, NICs) x NIC bandwidth).
    hw.nics_per_node = hw.devices_per_node;
    hw.inter_node.bandwidth_bytes_per_s = c.network_gbps * 1e9 / 8 / hw.devices_per_node;
  }
  return hw;
}

int64_t FullMeshPrices::collective_ns(int rank, const schedule::Action& a) {
  const CollectivePrice p = collective_price(rank, a);
  const bool overlapped = p.lead_s > 0 || p.release_s > 0;
  return static_cast<int64_t>(std::llround((overlapped ? p.wire_s : p.charged_s) * 1e9));
}

engine::CollectiveOverlap FullMeshPrices::collective_overlap(int rank, const schedule::Action& a) {
  const CollectivePrice p = collective_price(rank, a);
  auto ns = [](double s) { return static_cast<int64_t>(std::llround(s * 1e9)); };
  if (p.hide_layers > 0) return {.charge_share = p.charge_share, .hide_layers = p.hide_layers};
  if (p.release_s > 0) return {.release_ns = ns(p.release_s)};
  if (!(p.lead_s > 0)) return {};
  return {.lead_ns = ns(p.lead_s), .tail_ns = ns(p.tail_s), .charge_share = p.charge_share};
}

CollectivePrice FullMeshPrices::collective_price(int rank, const schedule::Action& a) {
  const cost::GroupSpan span = hybrid_span(a, span_of(a.group, rank));
  const auto key = std::make_tuple(static_cast<int>(a.kind), a.stage, a.bytes, span.ranks,
                                   span.nodes, span.ranks_per_node, static_cast<int>(a.group));
  auto it = prices_.find(key);
  if (it != prices_.end()) return it->second;
  const PredictConfig& c = r_.config;
  const auto kind = collective_kind(a.kind);
  // A dp reduction's bytes are its gradients' in the framework's reduction precision already
  // (Resolved::grad_bytes): what the action says is what the links move.
  const double bytes = static_cast<double>(a.bytes);
  double seconds;
  const int64_t expert = a.group == mesh::GroupKind::kDp && a.stage < r_.num_stages
                             ? r_.w.expert_parameters[a.stage]
                             : 0;
  // ZeRO-3 gathers and reduces layer by layer: one collective per layer, each with its latency.
  const bool per_layer = c.zero >= 3 && a.group == mesh::GroupKind::kDp && a.stage < r_.num_stages;
  const int layers = per_layer ? r_.w.layers[a.stage] : 1;
  if (expert > 0 && c.ep > 1) {
    // Expert gradients reduce over the dp / ep replicas of each expert only; under ZeRO-3 both
    // parts layer by layer, as the dense one alone was (the expert branch had priced the whole
    // stage's collective once, with one latency).
    const double share = static_cast<double>(expert) / (expert + r_.w.dense_parameters[a.stage]);
    cost::GroupSpan edp{span.ranks / c.ep, std::min(span.nodes, span.ranks / c.ep),
                        std::max(1, span.ranks_per_node / c.ep)};
    seconds =
        zero3_collective_seconds(r_.hw, kind, bytes * (1 - share), span, layers, r_.calibration) +
        zero3_collective_seconds(r_.hw, kind, bytes * share, edp, layers, r_.calibration);
  } else {
    seconds = zero3_collective_seconds(r_.hw, kind, bytes, span, layers, r_.calibration);
  }
  CollectivePrice p{.wire_s = seconds, .exposed_s = seconds, .charged_s = seconds};
  if (a.group == mesh::GroupKind::kDp && a.stage < r_.num_stages) {
    // Gradient reductions hide behind a microbatch's backward, parameter gathers behind the
    // forward before their use, when the framework overlaps them (framework.h).
    const engine::StageTiming& t = r_.timings[a.stage];
    const int layers = r_.w.layers[a.stage];
    double window_s = -1;  // < 0: the framework runs it alone
    if (kind == cost::CollectiveKind::kAllGather) {
      if (r_.fw.param_gather == cost::Overlap::kOverlapped) window_s = t.forward_ns * 1e-9;
    } else if (kind == cost::CollectiveKind::kAllReduce ||
               kind == cost::CollectiveKind::kReduceScatter) {
      if (r_.fw.grad_reduce == cost::Overlap::kOverlapped) window_s = t.backward_ns * 1e-9;
    }
    if (window_s >= 0) {
      // The part that does hide still costs the compute it runs beside: its thread blocks hold
      // `sm_share` of the SMs (catalog collective_ctas), so that compute runs that much slower.
      p.exposed_s = exposed_seconds(seconds, window_s, layers);
      p.charged_s = p.exposed_s + sm_share(r_.hw) * (seconds - p.exposed_s);
      // A reduction hides behind the backward before it, which the engine has run by the time
      // the cursor reaches the reduction: it starts it early, when its stream was free then
      // (item 53). ZeRO-3's gathers hide behind the compute that uses them, a forward or a
      // backward, which may start once the part they cannot hide has arrived (items 54, 55);
      // both keep their stream for all of their time. ZeRO-1 and 2 gather after the step's update,
      // for the next step's forward: the step pays what that leaves exposed, as before.
      if (kind != cost::CollectiveKind::kAllGather) {
        p.lead_s = window_s;
        p.tail_s = std::min(seconds, seconds / std::max(1, layers));
        p.charge_share = sm_share(r_.hw);
      } else if (c.zero >= 3) {
        p.release_s = p.charged_s;
        p.hide_layers = std::max(1, layers);
        p.charge_share = sm_share(r_.hw);
      }
    }
  }
  prices_.emplace(key, p);
  return p;
}

double FullMeshPrices::collective_sm_share(int rank, const schedule::Action& a) {
  if (sm_share(r_.hw) <= 0) return 0;
  const CollectivePrice p = collective_price(rank, a);
  return p.exposed_s < p.wire_s ? 0 : sm_share(r_.hw);
}

int FullMeshPrices::collective_tier(int rank, const schedule::Action& a) {
  return hybrid_span(a, span_of(a.group, rank)).nodes > 1 ? 1 : 0;
}

// Hybrid sharding (options.shard_group): a ZeRO-3 gather or reduce-scatter on dp runs inside a
// shard group (shard_group consecutive dp ranks, each with its cp devices), the all-reduce of the
// shards across the replicas (every shard_group-th dp rank); both from the dp group's own span.
cost::GroupSpan FullMeshPrices::hybrid_span(const schedule::Action& a,
                                            const cost::GroupSpan& dp) const {
  const int shard = r_.config.shard_group > 0 ? r_.config.zero_shards() : 0;
  if (a.group != mesh::GroupKind::kDp || shard <= 0 || shard >= dp.ranks) return dp;
  const int per_node = std::max(1, dp.ranks_per_node);
  if (a.kind == schedule::ActionKind::kAllReduce) {
    const int replicas = dp.ranks / shard;
    const int together = std::max(1, per_node / shard);  // replicas sharing a node
    return {replicas, (replicas + together - 1) / together, std::min(together, replicas)};
  }
  const int in_node = std::min(shard, per_node);
  return {shard, (shard + in_node - 1) / in_node, in_node};
}

int FullMeshPrices::group_leader(mesh::GroupKind g, int rank) const {
  return r_.mesh.peer_in_group(g, rank, 0);
}

cost::GroupSpan FullMeshPrices::span_of(mesh::GroupKind g, int rank) {
  const int leader = group_leader(g, rank);
  const uint64_t key = (uint64_t{static_cast<uint8_t>(g)} << 32) | static_cast<uint32_t>(leader);
  auto it = spans_.find(key);
  if (it == spans_.end()) it = spans_.emplace(key, r_.topo.span(g, leader)).first;
  return it->second;
}

}  // namespace meshscope::predict
