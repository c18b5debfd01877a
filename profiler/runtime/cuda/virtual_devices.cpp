// Green contexts through driver entry points: SM resource of the GPU, split into equal groups,
// one descriptor and green context per group, streams inside each.
#include "profiler/runtime/cuda/virtual_devices.h"

#include <algorithm>
#include <stdexcept>

#include "kernels/cuda/check.h"

namespace meshscope::runtime::cuda {

VirtualDevices::VirtualDevices(int gpu, int count, bool want_green, std::ostream* log) : gpu_(gpu) {
  MESHSCOPE_CUDA_CHECK(cudaSetDevice(gpu));
  MESHSCOPE_CUDA_CHECK(cudaFree(nullptr));  // creates the primary context the green ones split
  if (!want_green) {
    fallback_reason_ = "green contexts switched off";
  } else if (!try_green(gpu, count)) {
    if (log != nullptr) {
      *log << "cuda-virtual: warning: green contexts refused (" << fallback_reason_
           << "); virtual devices share all SMs through plain streams\n";
    }
  }
  if (green_) return;
  devices_.clear();
  devices_.resize(count);
  for (auto& d : devices_) {
    d.compute = kernels::cuda::make_stream();
    d.comm = kernels::cuda::make_stream();
  }
}

bool VirtualDevices::try_green(int gpu, int count) {
  std::string why;
  api_ = load_driver_api(&why);
  if (!api_) {
    fallback_reason_ = why;
    return false;
  }
  const DriverApi& api = *api_;
  try {
    CUdevice dev = 0;
    check_driver(api, api.device_get(&dev, gpu), "cuDeviceGet");
    CUdevResource all{};
    check_driver(api, api.device_get_dev_resource(dev, &all, CU_DEV_RESOURCE_TYPE_SM),
                 "cuDeviceGetDevResource");
    // Equal shares, rounded down to the split granularity: the co-scheduling alignment, and no
    // finer than the minimum partition (cuda.h's guideline for sm_90+: at least 8 SMs, a multiple
    // of 8). A share the driver would round up makes fewer groups than asked for.
    sms_total_ = static_cast<int>(all.sm.smCount);
    const unsigned align = std::max({1u, all.sm.smCoscheduledAlignment, all.sm.minSmPartitionSize});
    const unsigned share = all.sm.smCount / count / align * align;
    if (share == 0 || share < all.sm.minSmPartitionSize) {
      fallback_reason_ = std::to_string(all.sm.smCount) + " SMs cannot be split into " +
                         std::to_string(count) + " shares of at least " +
                         std::to_string(std::max(align, all.sm.minSmPartitionSize));
      return false;
    }
    std::vector<CUdevResource> groups(count);
    unsigned made = static_cast<unsigned>(count);
    check_driver(api, api.sm_resource_split_by_count(groups.data(), &made, &all, nullptr, 0, share),
                 "cuDevSmResourceSplitByCount");
    if (made < static_cast<unsigned>(count)) {
      fallback_reason_ = "cuDevSmResourceSplitByCount made " + std::to_string(made) + " of " +
                         std::to_string(count) + " groups of " + std::to_string(share) + " SMs";
      return false;
    }
    devices_.resize(count);
    for (int i = 0; i < count; ++i) {
      CUdevResourceDesc desc = nullptr;
      check_driver(api, api.dev_resource_generate_desc(&desc, &groups[i], 1),
                   "cuDevResourceGenerateDesc");
      VirtualDevice& d = devices_[i];
      check_driver(api, api.green_ctx_create(&d.green, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM),
                   "cuGreenCtxCreate");
      check_driver(api, api.ctx_from_green_ctx(&d.context, d.green), "cuCtxFromGreenCtx");
      CUstream compute = nullptr, comm = nullptr;
      check_driver(api, api.green_ctx_stream_create(&compute, d.green, CU_STREAM_NON_BLOCKING, 0),
                   "cuGreenCtxStreamCreate");
      d.compute = kernels::cuda::Stream(compute);
      check_driver(api, api.green_ctx_stream_create(&comm, d.green, CU_STREAM_NON_BLOCKING, 0),
                   "cuGreenCtxStreamCreate");
      d.comm = kernels::cuda::Stream(comm);
    }
    green_ = true;
    sms_each_ = static_cast<int>(groups[0].sm.smCount);  // what the driver gave, not what we asked
    return true;
  } catch (const std::runtime_error& e) {
    fallback_reason_ = e.what();
    for (auto& d : devices_) {
      d.compute.reset();
      d.comm.reset();
      if (d.green != nullptr) api.green_ctx_destroy(d.green);
    }
    devices_.clear();
    return false;
  }
}

void VirtualDevices::make_current(int i) const {
  if (!green_) return;
  check_driver(*api_, api_->ctx_set_current(devices_[i].context), "cuCtxSetCurrent");
}

VirtualDevices::~VirtualDevices() {
  for (auto& d : devices_) {
    d.compute.reset();
    d.comm.reset();
    if (d.green != nullptr && api_) api_->green_ctx_destroy(d.green);
  }
  // The last green context made current on this thread is gone: the primary context takes its
  // place, so the thread's next runtime call does not meet a destroyed context.
  if (green_) MESHSCOPE_CUDA_WARN(cudaSetDevice(gpu_));
}

}  // namespace meshscope::runtime::cuda
