// The `meshscope` command carries no GPU or MPI library: CUDA, cuBLAS, NCCL, CUPTI and libmpi sit
// in modules loaded only when a GPU backend or an mpirun launch asks for them
// (profiler/runtime/plugin.h), so reading a trace starts fast and small.
#include <gtest/gtest.h>

#include <string>

#include "cli_test_util.h"

namespace {

using meshscope::cli_testing::shell;

const std::string kMeshscope = std::string(MESHSCOPE_BINARY_DIR) + "/meshscope";

TEST(LeanCli, TheExecutableLinksNoGpuOrMpiLibrary) {
  const auto r = shell("ldd " + kMeshscope);
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* lib :
       {"libcudart", "libcublas", "libnccl", "libcupti", "libnvToolsExt", "libmpi", "libcuda."}) {
    EXPECT_EQ(r.out.find(lib), std::string::npos) << lib << " in\n" << r.out;
  }
}

TEST(LeanCli, AnalyzeMapsNoGpuOrMpiLibrary) {
  // The process's own map of what it loaded, read while it runs: `analyze` of a sample trace,
  // with the loader printing every library it opens.
  const std::string trace =
      std::string(MESHSCOPE_SOURCE_DIR) + "/traces/samples/1f1b_pp4_mb8_cpu.json";
  const auto r = shell("LD_DEBUG=files " + kMeshscope + " analyze " + trace);
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* lib : {"libcudart", "libcublas", "libnccl", "libcupti", "libmpi",
                          "libmeshscope-gpu", "libmeshscope-mpi"}) {
    EXPECT_EQ(r.err.find(lib), std::string::npos) << lib << " opened by analyze";
  }
}

TEST(LeanCli, TheGpuModuleIsLoadedWhenAGpuBackendIsProbed) {
  // `run` with the auto backend probes for GPUs: a CUDA build opens the GPU module for it (and,
  // with no GPU here, says why it fell back to the cpu backend).
  const auto r = shell("LD_DEBUG=files " + kMeshscope +
                       " run --schedule 1f1b --pp 2 -m 2 --layers 2 --hidden 8 --steps 1");
  ASSERT_EQ(r.status, 0) << r.err;
  const bool cuda_build =
      shell("test -e " + std::string(MESHSCOPE_BINARY_DIR) + "/libmeshscope-gpu.so").status == 0;
  if (!cuda_build) GTEST_SKIP() << "no CUDA in this build";
  EXPECT_NE(r.err.find("libmeshscope-gpu.so"), std::string::npos);
  EXPECT_NE(r.err.find("backend: "), std::string::npos);
}

}  // namespace
