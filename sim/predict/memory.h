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
  // Parameters FSDP keeps whole beside their shards (cost::Framework::held_unsharded), on the rank
  // that computes the loss, at its peak: while the loss runs, its root unit and torchtitan's last
  // block; or, where that is higher, when the last block's gradients are reduced (item 49), its
  // root, the output layer's gradient, the blocks gathered ahead and the last block's gradients
  // with the reduction's copy of them (then `activations_bytes` is what is still kept, less the
  // head's and the last layer's, and `working_bytes` 0).
  int64_t unsharded_bytes = 0;
  bool peak_at_first_reduce = false;
  int64_t total() const {
    return parameters_bytes + gradients_bytes + optimizer_bytes + activations_bytes +
           working_bytes + unsharded_bytes;
  }
};

// `dense` parameters are replicated over the dp group of `dp` ranks, `expert` ones over dp / ep.
DeviceMemory device_memory(int64_t dense_params, int64_t expert_params, int dp, int ep, int zero,
                           const StateBytesPerParam& per_param, int64_t peak_activation_bytes);

// What FSDP keeps whole on the rank that computes the loss, per tp rank (cost::Framework::
// held_unsharded; docs/ACCURACY.md items 48 and 49).
struct FsdpHeld {
  bool root = false;             // the root unit stays whole from the forward to the backward's end
  int last_layers = 0;           // blocks not resharded after the forward
  int prefetch_layers = 0;       // blocks gathered ahead in the backward
  int64_t root_parameters = 0;   // the rank's parameters outside its layers
  int64_t layer_parameters = 0;  // one block's
  int64_t rank_layers = 0;       // the blocks the rank holds
  int64_t loss_stage_layers = 0;  // of them, on the stage that computes the loss
  int64_t head_parameters = 0;  // the output layer's, whose gradient waits for the root's reduction
  int64_t head_activation_bytes = 0;        // what the output head keeps for the backward
  int64_t last_layer_activation_bytes = 0;  // what the last block keeps
  int element_bytes = 2;                    // the compute type, which FSDP gathers in
  double reduce_bytes = 0;  // the reduction's type; 0 or element_bytes: reduced as computed
};

// Sets `m` (the loss's rank, its working set the loss's) to the higher of FSDP's two moments: the
// loss, with the root and the last blocks whole; the last block's gradient reduction, with the
// root, the output layer's gradient, the prefetched blocks and the last block's gradients (and
// their copy in the reduction's type) whole, and the activations less the head's and that block's.
void add_fsdp_held(const FsdpHeld& held, DeviceMemory& m);

}  // namespace meshscope::predict
