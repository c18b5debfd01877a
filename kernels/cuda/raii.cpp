// Creation of the RAII-owned CUDA resources.
#include "kernels/cuda/raii.h"

namespace meshscope::kernels::cuda {

Stream make_stream(int priority) {
  cudaStream_t s = nullptr;
  MESHSCOPE_CUDA_CHECK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, priority));
  return Stream(s);
}

Event make_event(bool timing) {
  cudaEvent_t e = nullptr;
  MESHSCOPE_CUDA_CHECK(cudaEventCreateWithFlags(&e, timing ? cudaEventDefault
                                                           : cudaEventDisableTiming));
  return Event(e);
}

CublasHandle make_cublas(cudaStream_t stream) {
  cublasHandle_t h = nullptr;
  MESHSCOPE_CUBLAS_CHECK(cublasCreate(&h));
  CublasHandle owned(h);
  MESHSCOPE_CUBLAS_CHECK(cublasSetStream(h, stream));
  return owned;
}

}  // namespace meshscope::kernels::cuda
