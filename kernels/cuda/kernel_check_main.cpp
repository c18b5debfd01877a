// meshscope-kernel-check: runs the CUDA-vs-CPU op checks without GoogleTest (for gpu-check.sh).
// Exit 0: all passed; 1: a check failed or the device failed; 2: no device (skipped).
// --versions: one line per library ("version<TAB>cublas<TAB>13.0.0<TAB>cublasGetProperty"), exit 0
// when every version could be read, 1 otherwise; needs no device.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "kernels/cuda/check_harness.h"
#include "kernels/cuda/device.h"
#include "kernels/cuda/library_versions.h"

int main(int argc, char** argv) {
  using namespace meshscope::kernels::cuda;
  CheckOptions options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--seed" && i + 1 < argc) {
      options.seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--versions") {
      bool all = true;
      for (const LibraryVersion& v : library_versions()) {
        std::printf("version\t%s\t%s\t%s\n", v.library.c_str(),
                    v.version.empty() ? "?" : v.version.c_str(), v.detail.c_str());
        all = all && !v.version.empty();
      }
      return all ? 0 : 1;
    } else {
      std::fprintf(stderr, "usage: meshscope-kernel-check [--seed N | --versions]\n");
      return 1;
    }
  }
  const DeviceProbe probe = probe_devices();
  if (!probe.available()) {
    std::printf("SKIP: %s\n", no_device_message(probe).c_str());
    return 2;
  }
  try {
    uint64_t seed = 0;
    const auto results = run_kernel_checks(options, &seed);
    std::fputs(format_check_results(results, seed).c_str(), stdout);
    for (const auto& r : results) {
      if (!r.passed) return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "meshscope-kernel-check: %s\n", e.what());
    return 1;
  }
}
