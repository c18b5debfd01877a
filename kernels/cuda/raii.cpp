// Creation of the RAII-owned CUDA resources.
#include "kernels/cuda/raii.h"

#include <cstdint>

namespace meshscope::kernels::cuda {

Stream make_stream(int priority) {
  cudaStream_t s = nullptr;
  MESHSCOPE_CUDA_CHECK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, priority));
  return Stream(s);
}

Event make_event(bool timing) {
  cudaEvent_t e = nullptr;
  MESHSCOPE_CUDA_CHECK(
      cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming));
  return Event(e);
}

CublasHandle make_cublas(cudaStream_t stream) {
  cublasHandle_t h = nullptr;
  MESHSCOPE_CUBLAS_CHECK(cublasCreate(&h));
  CublasHandle owned(h);
  MESHSCOPE_CUBLAS_CHECK(cublasSetStream(h, stream));
  return owned;
}

MemPool make_device_pool(int device) {
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.handleTypes = cudaMemHandleTypeNone;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  cudaMemPool_t pool = nullptr;
  MESHSCOPE_CUDA_CHECK(cudaMemPoolCreate(&pool, &props));
  MemPool owned(pool);
  uint64_t keep_all = UINT64_MAX;
  MESHSCOPE_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_all));
  int off = 0;
  MESHSCOPE_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolReuseAllowOpportunistic, &off));
  MESHSCOPE_CUDA_CHECK(
      cudaMemPoolSetAttribute(pool, cudaMemPoolReuseAllowInternalDependencies, &off));
  return owned;
}

}  // namespace meshscope::kernels::cuda
