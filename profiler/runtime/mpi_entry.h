// What profiler/runtime/mpi provides to the mpirun launch (cli/run_common.cpp): the ProcessLink of
// an mpirun launch, messages as MPI point-to-point byte messages on a private duplicate of
// MPI_COMM_WORLD. Built only with MESHSCOPE_MPI, into the MPI module (libmeshscope-mpi.so,
// profiler/runtime/mpi/CMakeLists.txt), which exports it as one table (see plugin.h); the
// launcher loads it only when meshscope starts as one of several processes.
#pragma once

#include <memory>

#include "profiler/runtime/plugin.h"
#include "profiler/runtime/process_link.h"

namespace meshscope::runtime::mpi {

// Initialises MPI (MPI_THREAD_SERIALIZED: the messenger serialises every call) unless the caller
// already did; the link finalises it on destruction if it initialised it. Throws
// std::runtime_error when MPI cannot start or lacks that thread level.
std::unique_ptr<ProcessLink> make_mpi_link();

// The table the MPI module (libmeshscope-mpi.so, profiler/runtime/plugin.h) returns from
// `extern "C" meshscope_mpi_links()`, so only a launch under mpirun loads libmpi.
struct MpiLinkEntry {
  int abi = kPluginAbi;
  std::unique_ptr<ProcessLink> (*make_mpi_link)() = nullptr;
};
inline constexpr const char* kMpiLinkSymbol = "meshscope_mpi_links";

}  // namespace meshscope::runtime::mpi
