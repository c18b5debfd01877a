// Per-device memory by ZeRO stage.
#include "sim/predict/memory.h"

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

}  // namespace meshscope::predict
