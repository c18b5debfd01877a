// Every backend meshscope has, one row each. The one list that `BackendKind` and its names
// (backend.h), the factory (backend_factory.cpp), the GPU module's entry (cuda/cuda_entry.cpp),
// the tracer choice (profiler/capture/tracer_factory.cpp) and the commands' `--backend` parsing and
// help read. A row is ROW(kind, name, maker, description): `maker` is the function the backend's
// own .cpp defines, `std::unique_ptr<Backend> maker(const BackendOptions&)` (declared in
// backend.h), which builds it or throws std::runtime_error saying why it cannot.
// Adding a backend: its row here, its .cpp, its line in the folder's CMakeLists.txt
// (docs/ARCHITECTURE.md, "Adding a backend"; tests/house/backend_table_test.cpp checks that every
// Backend class in profiler/runtime is made by a maker of this table).
#pragma once

// Linked into every executable (meshscope::runtime).
#define MESHSCOPE_LINKED_BACKENDS(ROW)                                                    \
  ROW(kCpu, "cpu", make_cpu_backend,                                                      \
      "host threads, one per rank (under mpirun: one process per rank, messages through " \
      "the messenger)")

// In the GPU module (libmeshscope-gpu.so, profiler/runtime/plugin.h), loaded only when one of
// them is asked for or probed; nothing outside the module links CUDA.
#define MESHSCOPE_GPU_MODULE_BACKENDS(ROW)                                                     \
  ROW(kCuda, "cuda", make_cuda_backend,                                                        \
      "one GPU per rank, NCCL (under mpirun: one process per rank on its node's GPU)")         \
  ROW(kCudaVirtual, "cuda-virtual", make_cuda_virtual_backend,                                 \
      "the ranks as virtual devices on one GPU (green contexts with equal SM shares), in one " \
      "process")
