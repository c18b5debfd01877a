// Configuration -> workload costs -> schedule -> engine -> summary.
#include "sim/predict/simulate.h"

#include <chrono>

#include "sim/cost/framework.h"
#include "sim/cost/hardware.h"
#include "sim/predict/resolved.h"
#include "sim/predict/run_workload.h"
#include "sim/predict/simulate_parts.h"

namespace meshscope::predict {
namespace {

using simulate_parts::check_full_footprint;
using simulate_parts::full_schedule;
using simulate_parts::Run;
using simulate_parts::run_generated;
using simulate_parts::run_given;
using simulate_parts::summarise;

// ---- the engine's input: stage times, link tiers, shared processors -----------------------------

engine::EngineInput engine_input(const Resolved& r) {
  const cost::P2pLink intra = cost::p2p_link(r.hw, true, r.calibration);
  const cost::P2pLink inter = cost::p2p_link(r.hw, false, r.calibration);
  engine::EngineInput in;
  in.stages = r.timings;
  in.links = {
      engine::LinkSpec{intra.bandwidth_bytes_per_s, static_cast<int64_t>(intra.latency_ns)},
      engine::LinkSpec{inter.bandwidth_bytes_per_s, static_cast<int64_t>(inter.latency_ns)}};
  if (simulate_parts::shares_cores(r)) in.shared_processors = r.hw.host_cores;
  in.blocking_sends = r.fw.p2p_blocking;
  in.blocking_reductions = r.fw.grad_reduce == cost::Overlap::kExposed;
  // Receives posted ahead hold NCCL's thread blocks until their data arrives; priced across the
  // network only (cost::kNcclP2pNetThreadBlocks; docs/ACCURACY.md item 33).
  const double net_share = cost::p2p_net_sm_share(r.hw);
  if (r.fw.p2p_recv_posted_ahead && in.shared_processors == 0 && net_share > 0) {
    in.recvs_posted_ahead = true;
    in.p2p_sm_share_by_tier = {0.0, net_share};
  }
  return in;
}

}  // namespace

Simulation simulate(const PredictConfig& c, const SimulateOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  const Resolved r(c, o.calibration);
  FullMeshPrices prices(r);
  engine::EngineInput in = engine_input(r);
  Run run = o.schedule != nullptr ? run_given(r, prices, std::move(in), o)
                                  : run_generated(r, prices, std::move(in), o);
  Simulation out;
  out.summary = summarise(r, prices, run, o.breakdown);
  if (o.full_schedule && run.reduced) {
    check_full_footprint(r, false, true);
    out.schedule = full_schedule(r);
  } else {
    out.schedule = std::move(run.schedule);
  }
  if (o.build_timeline) {
    out.timeline = std::move(run.result.timeline);
    out.timeline.run.workload = workload_descriptor(c);
    out.timeline.run.hardware = r.hw.name;
    out.timeline.run.backend = "sim";
    out.timeline.metadata["model"] = r.w.description;
    out.timeline.metadata["hardware"] = r.hw.name;
    out.timeline.metadata["backend"] = "sim";
  }
  out.summary.simulator_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

nlohmann::json to_json(const Summary& s) {
  nlohmann::json mem = nlohmann::json::array();
  for (size_t p = 0; p < s.memory.size(); ++p) {
    const DeviceMemory& d = s.memory[p];
    mem.push_back({{"pp", p},
                   {"parameters_bytes", d.parameters_bytes},
                   {"gradients_bytes", d.gradients_bytes},
                   {"optimizer_bytes", d.optimizer_bytes},
                   {"activations_bytes", d.activations_bytes},
                   {"working_bytes", d.working_bytes},
                   {"unsharded_bytes", d.unsharded_bytes},
                   {"total_bytes", d.total()}});
    // Where FSDP's whole copies are counted, the moment the device's peak is taken at.
    if (d.unsharded_bytes > 0)
      mem.back()["peak_at"] = d.peak_at_first_reduce ? "first_gradient_reduce" : "loss";
  }
  return {{"model", s.model},
          {"hardware", s.hardware},
          {"framework", s.framework},
          {"schedule", s.schedule},
          {"mesh", s.mesh},
          {"gpus", s.gpus},
          {"microbatches", s.microbatches},
          {"step_time_s", s.step_time_s},
          {"step_time_s_low", s.step_time_s_low},
          {"step_time_s_high", s.step_time_s_high},
          {"tokens_per_s", s.tokens_per_s},
          {"tokens_per_s_low", s.tokens_per_s_low},
          {"tokens_per_s_high", s.tokens_per_s_high},
          {"samples_per_s", s.samples_per_s},
          {"tflops_per_gpu", s.tflops_per_gpu},
          {"mfu", s.mfu},
          {"mfu_low", s.mfu_low},
          {"mfu_high", s.mfu_high},
          {"range_rows", s.range_rows},
          {"range_basis", s.range_basis},
          {"range_max_seq", s.range_max_seq},
          {"range_beyond_seq", s.range_beyond_seq},
          {"range_without_fp8", s.range_without_fp8},
          {"slowest_gpu_share", s.slowest_gpu_share},
          {"bubble_fraction", s.bubble_fraction},
          {"communication_s", s.communication_s},
          {"peak_memory_bytes", s.peak_memory_bytes},
          {"memory_capacity_bytes", s.memory_capacity_bytes},
          {"fits", s.fits},
          {"memory_per_stage", mem},
          {"state_bytes_per_parameter",
           {{"parameters", s.state_bytes.parameters},
            {"gradients", s.state_bytes.gradients},
            {"optimizer", s.state_bytes.optimizer}}},
          {"state_shards",
           {{"parameters", s.parameter_shards},
            {"gradients", s.gradient_shards},
            {"optimizer", s.optimizer_shards}}},
          {"breakdown", s.breakdown.known ? to_json(s.breakdown) : nlohmann::json(nullptr)},
          {"replicas_simulated_once", s.replicas_simulated_once},
          {"simulated_ranks", s.simulated_ranks},
          {"simulated_actions", s.simulated_actions},
          {"simulator_seconds", s.simulator_seconds}};
}

}  // namespace meshscope::predict
