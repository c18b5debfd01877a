// The per-rank math Context: cuBLAS handle, scratch memory and the loss slot.
#include <stdexcept>
#include <string>

#include "kernels/cuda/ops.h"

namespace meshscope::kernels::cuda {

std::optional<GemmPrecision> parse_gemm_precision(std::string_view s) {
  for (size_t i = 0; i < kGemmPrecisionNames.size(); ++i) {
    if (kGemmPrecisionNames[i] == s) return static_cast<GemmPrecision>(i);
  }
  return std::nullopt;
}

Context::Context(cudaStream_t stream, GemmPrecision precision)
    : stream_(stream), cublas_(make_cublas(stream)), precision_(precision), loss_(1), labels_(1) {
  MESHSCOPE_CUDA_CHECK(cudaMemsetAsync(labels_.data(), 0, sizeof(LabelCheck), stream_));
}

void Context::set_sm_count_target(int sms) {
  MESHSCOPE_CUBLAS_CHECK(cublasSetSmCountTarget(cublas_.get(), sms));
}

void* Context::scratch(size_t bytes) {
  if (scratch_.size() < bytes) {
    // Work queued on the stream may still read the old scratch, and cudaFree only "may perform
    // implicit synchronization" (cuda_runtime_api.h): wait for it before the old one goes.
    MESHSCOPE_CUDA_CHECK(cudaStreamSynchronize(stream_));
    scratch_ = DeviceBuffer<std::byte>();
    scratch_ = DeviceBuffer<std::byte>(bytes + bytes / 2);
  }
  return scratch_.data();
}

void Context::check_labels() {
  LabelCheck host{};
  MESHSCOPE_CUDA_CHECK(
      cudaMemcpyAsync(&host, labels_.data(), sizeof(host), cudaMemcpyDeviceToHost, stream_));
  MESHSCOPE_CUDA_CHECK(cudaStreamSynchronize(stream_));
  if (host.has_bad_label == 0) return;
  MESHSCOPE_CUDA_CHECK(cudaMemsetAsync(labels_.data(), 0, sizeof(LabelCheck), stream_));
  throw std::out_of_range("loss: label " + std::to_string(host.bad_label) +
                          " is outside [0, classes)");
}

double Context::read_loss() {
  double value = 0;
  MESHSCOPE_CUDA_CHECK(
      cudaMemcpyAsync(&value, loss_.data(), sizeof(value), cudaMemcpyDeviceToHost, stream_));
  check_labels();
  return value;
}

}  // namespace meshscope::kernels::cuda
