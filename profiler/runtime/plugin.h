// Optional parts of meshscope built as shared modules beside the executable (the GPU stack:
// CUDA, cuBLAS, NCCL, CUPTI; MPI) and loaded only when a command asks for them, so `meshscope
// analyze` or `predict` never maps hundreds of MiB of GPU libraries.
#pragma once

#include <string>
#include <string_view>

namespace meshscope::runtime {

// The module files and the symbol each exports (a function returning its entry table).
inline constexpr const char* kGpuModuleFile = "libmeshscope-gpu.so";
inline constexpr const char* kMpiModuleFile = "libmeshscope-mpi.so";

// Bumped whenever an entry table or a type passed through one changes, so a module from another
// build is refused instead of called with the wrong layout.
inline constexpr int kPluginAbi = 2;

// The address of `symbol` in module `file`, loading the module on first use (once per process;
// later calls reuse it). The module is looked for in $MESHSCOPE_PLUGIN_DIR, beside the running
// executable, in its parent folder (tests run from build/tests/) and in ../lib/meshscope (an
// installed tree). Returns nullptr and sets *why when the module is missing or cannot load.
void* plugin_symbol(std::string_view file, const char* symbol, std::string* why);

}  // namespace meshscope::runtime
