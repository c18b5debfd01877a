// Memory of one device: parameters, gradients and optimizer state by ZeRO stage (Rajbhandari et
// al. 2020: mixed-precision Adam keeps 2 + 2 + 12 bytes per parameter; ZeRO-1 shards the 12 over
// dp, ZeRO-2 the gradients too, ZeRO-3 the parameters too), plus the activations the schedule
// holds at its peak (from the simulation: GPipe keeps m microbatches, 1F1B at most p - rank, ...).
// A framework profile may keep more gradient bytes than the element size (cost::Framework::
// gradient_bytes: Megatron-LM's fp32 main gradients under bf16).
#pragma once

#include <cstdint>

#include "sim/cost/hardware.h"

namespace meshscope::predict {

struct StateBytesPerParam {
  double parameters = 2;  // the weights computed with
  double gradients = 2;
  double optimizer = 12;  // fp32 master weights + Adam's two moments
};

// bf16/fp16 + Adam: 2/2/12; fp32 + Adam: 4/4/8; SGD: no optimizer state (fp32 master in mixed
// precision: 4).
StateBytesPerParam state_bytes(cost::Precision precision, bool adam);

struct DeviceMemory {
  int64_t parameters_bytes = 0;
  int64_t gradients_bytes = 0;
  int64_t optimizer_bytes = 0;
  int64_t activations_bytes = 0;  // peak held by the schedule
  // Held only while one op runs (model::StageCost::working_bytes: the loss's working tensors),
  // counted as if that op ran at the schedule's activation peak: exact without pipelining, where
  // every layer's activations are held when the loss runs; an upper bound with it.
  int64_t working_bytes = 0;
  // Parameters FSDP keeps whole beside their shards while the loss runs (cost::Framework::
  // held_unsharded: its root unit, torchtitan's last block), on the rank that computes the loss.
  int64_t unsharded_bytes = 0;
  int64_t total() const {
    return parameters_bytes + gradients_bytes + optimizer_bytes + activations_bytes +
           working_bytes + unsharded_bytes;
  }
};

// `dense` parameters are replicated over the dp group of `dp` ranks, `expert` ones over dp / ep.
DeviceMemory device_memory(int64_t dense_params, int64_t expert_params, int dp, int ep, int zero,
                           const StateBytesPerParam& per_param, int64_t peak_activation_bytes);

}  // namespace meshscope::predict
