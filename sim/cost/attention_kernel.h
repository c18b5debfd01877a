// The attention kernel classes a framework profile names (profile key "flash_attention" and
// "softmax"; config options.flash_attention): the compute model prices a fused kernel by its class.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace meshscope::cost {

// Attention implementation. Unfused: QK^T, softmax, PV as separate ops; fused softmax: Megatron's
// scale-mask-softmax kernel between the two GEMMs; flash1/2/3: one fused kernel of that class.
enum class AttentionKernel : uint8_t {
  kUnfused = 0,
  kFusedSoftmax,
  kFlash2,
  kFlash3,
  kFlash1,
  kCount
};
inline constexpr std::array<std::string_view, static_cast<size_t>(AttentionKernel::kCount)>
    kAttentionKernelNames = {"unfused", "fused-softmax", "flash2", "flash3", "flash1"};
constexpr std::string_view name(AttentionKernel k) {
  return kAttentionKernelNames[static_cast<size_t>(k)];
}
std::optional<AttentionKernel> parse_attention_kernel(std::string_view s);

}  // namespace meshscope::cost
