// Checks of the mixture-of-experts routing ops against kernels/cpu: the choices and their slots
// must be identical (integers), the floats within the fp32 tolerance; a capacity that drops
// choices is part of every case.
#include <string>
#include <vector>

#include "kernels/cuda/check_internal.h"

namespace meshscope::kernels::cuda::detail {
namespace {

std::vector<int32_t> download_ints(Checker& c, const DeviceBuffer<int32_t>& dev) {
  std::vector<int32_t> host(dev.size());
  MESHSCOPE_CUDA_CHECK(cudaMemcpyAsync(host.data(), dev.data(), dev.bytes(), cudaMemcpyDeviceToHost,
                                       c.ctx().stream()));
  c.sync();
  return host;
}

void check_routing(Checker& c, int tokens, int experts, int k, int capacity, int cols) {
  const std::string v = std::to_string(tokens) + " tokens, " + std::to_string(experts) +
                        " experts, k=" + std::to_string(k) + ", capacity " +
                        std::to_string(capacity);
  const int slots = experts * capacity;
  const auto logits = c.random(size_t(tokens) * experts, -3.f, 3.f);
  auto d_logits = c.upload(logits);
  auto d_probs = c.poisoned(logits.size());
  softmax_rows(c.ctx(), tokens, experts, d_logits.data(), d_probs.data());
  std::vector<float> probs(logits.size());
  cpu::softmax_rows(tokens, experts, logits.data(), probs.data());
  c.expect_close("softmax_rows", v, c.download(d_probs), probs, kFp32Tolerance);

  // Route the cpu's probabilities on both sides, so both see the same ties.
  auto d_cpu_probs = c.upload(probs);
  DeviceBuffer<int32_t> d_dest(size_t(tokens) * k);
  auto d_gate = c.poisoned(size_t(tokens) * k);
  top_k_route(c.ctx(), tokens, experts, k, capacity, d_cpu_probs.data(), d_dest.data(),
              d_gate.data());
  std::vector<int32_t> dest(size_t(tokens) * k);
  std::vector<float> gate(dest.size());
  cpu::top_k_route(tokens, experts, k, capacity, probs.data(), dest.data(), gate.data());
  c.expect_true("top_k_route.dest", v, download_ints(c, d_dest) == dest, "slots differ");
  c.expect_close("top_k_route.gate", v, c.download(d_gate), gate, kFp32Tolerance);

  const auto x = c.random(size_t(tokens) * cols);
  auto d_x = c.upload(x);
  auto d_buffer = c.poisoned(size_t(slots) * cols);
  moe_dispatch(c.ctx(), tokens, k, cols, slots, d_x.data(), d_dest.data(), d_buffer.data());
  std::vector<float> buffer(size_t(slots) * cols);
  cpu::moe_dispatch(tokens, k, cols, slots, x.data(), dest.data(), buffer.data());
  c.expect_close("moe_dispatch", v, c.download(d_buffer), buffer, kFp32Tolerance);

  const auto out = c.random(buffer.size());
  auto d_out = c.upload(out);
  for (const bool gated : {true, false}) {
    auto y = c.random(x.size());
    auto d_y = c.upload(y);
    moe_combine(c.ctx(), tokens, k, cols, d_out.data(), d_dest.data(),
                gated ? d_gate.data() : nullptr, d_y.data());
    cpu::moe_combine(tokens, k, cols, out.data(), dest.data(), gated ? gate.data() : nullptr,
                     y.data());
    c.expect_close(gated ? "moe_combine" : "moe_combine.ungated", v, c.download(d_y), y,
                   kFp32Tolerance);
  }

  const auto dy = c.random(x.size());
  auto d_dy = c.upload(dy);
  auto d_dbuf = c.poisoned(buffer.size());
  auto d_dgate = c.poisoned(gate.size());
  moe_combine_backward(c.ctx(), tokens, k, cols, slots, d_dy.data(), d_out.data(), d_dest.data(),
                       d_gate.data(), d_dbuf.data(), d_dgate.data());
  std::vector<float> dbuf(buffer.size()), dgate(gate.size());
  cpu::moe_combine_backward(tokens, k, cols, slots, dy.data(), out.data(), dest.data(), gate.data(),
                            dbuf.data(), dgate.data());
  c.expect_close("moe_combine_backward.buffer", v, c.download(d_dbuf), dbuf, kFp32Tolerance);
  c.expect_close("moe_combine_backward.gate", v, c.download(d_dgate), dgate, kFp32Tolerance);

  auto d_dlogits = c.poisoned(logits.size());
  router_backward(c.ctx(), tokens, experts, k, capacity, d_cpu_probs.data(), d_dest.data(),
                  d_dgate.data(), d_dlogits.data());
  std::vector<float> dlogits(logits.size());
  cpu::router_backward(tokens, experts, k, capacity, probs.data(), dest.data(), dgate.data(),
                       dlogits.data());
  c.expect_close("router_backward", v, c.download(d_dlogits), dlogits, kFp32Tolerance);
}

}  // namespace

void check_moe(Checker& c) {
  check_routing(c, 37, 8, 1, 4, 33);     // top-1, capacity factor ~0.86: drops
  check_routing(c, 300, 16, 2, 30, 64);  // top-2, capacity factor 0.8
  check_routing(c, 64, 4, 4, 64, 17);    // every expert, nothing dropped
}

}  // namespace meshscope::kernels::cuda::detail
