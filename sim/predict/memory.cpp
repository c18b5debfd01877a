// Per-device memory by ZeRO stage.
#include "sim/predict/memory.h"

#include <algorithm>

namespace meshscope::predict {

StateBytesPerParam state_bytes(cost::Precision precision, bool adam) {
  const bool half = cost::element_bytes(precision) == 2;
  StateBytesPerParam s;
  s.parameters = half ? 2 : 4;
  s.gradients = half ? 2 : 4;
  if (adam) {
    s.optimizer = half ? 12 : 8;
  } else {
    s.optimizer = half ? 4 : 0;
  }
  return s;
}

DeviceMemory device_memory(int64_t dense, int64_t expert, int dp, int ep, int zero,
                           const StateBytesPerParam& b, int64_t peak_activation_bytes) {
  const double dense_shards = dp;
  const double expert_shards = ep > 0 ? static_cast<double>(dp) / ep : dp;
  auto sharded = [&](double bytes_per_param, bool shard) {
    const double d = dense * bytes_per_param / (shard ? dense_shards : 1.0);
    const double e = expert * bytes_per_param / (shard ? expert_shards : 1.0);
    return static_cast<int64_t>(d + e);
  };
  DeviceMemory m;
  m.parameters_bytes = sharded(b.parameters, zero >= 3);
  m.gradients_bytes = sharded(b.gradients, zero >= 2);
  m.optimizer_bytes = sharded(b.optimizer, zero >= 1);
  m.activations_bytes = peak_activation_bytes;
  return m;
}

void add_fsdp_held(const FsdpHeld& f, DeviceMemory& m) {
  const int64_t e = f.element_bytes;
  const int64_t root = f.root ? f.root_parameters : 0;
  const int64_t kept = std::min<int64_t>(f.last_layers, f.loss_stage_layers);
  const int64_t at_loss = (root + kept * f.layer_parameters) * e;
  // The last block reduced, if the loss's stage has one; those before it gathered ahead.
  const int64_t block = f.loss_stage_layers > 0 ? f.layer_parameters : 0;
  const int64_t ahead =
      f.loss_stage_layers > 0 ? std::min<int64_t>(f.prefetch_layers, f.rank_layers - 1) * block : 0;
  const bool cast = f.reduce_bytes > 0 && f.reduce_bytes != static_cast<double>(e);
  const int64_t at_reduce =
      (root + f.head_parameters + ahead + block) * e +
      (cast ? static_cast<int64_t>(static_cast<double>(block) * f.reduce_bytes) : 0);
  const int64_t kept_then =
      std::max<int64_t>(0, m.activations_bytes - f.head_activation_bytes -
                               (f.loss_stage_layers > 0 ? f.last_layer_activation_bytes : 0));
  if (kept_then + at_reduce > m.activations_bytes + m.working_bytes + at_loss) {
    m.activations_bytes = kept_then;
    m.working_bytes = 0;
    m.unsharded_bytes = at_reduce;
    m.peak_at_first_reduce = true;
  } else {
    m.unsharded_bytes = at_loss;
  }
}

}  // namespace meshscope::predict
