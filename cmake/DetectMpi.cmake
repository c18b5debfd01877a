# MPI launches a run as one process per rank (`mpirun -np N meshscope run ...`): the processes
# exchange messages through profiler/runtime/mpi (the cpu backend's transfers, and the cuda
# backend's NCCL unique id, as nccl-tests does). Debian: libopenmpi-dev, openmpi-bin.
set(_mpi_found FALSE)
if(NOT MESHSCOPE_MPI STREQUAL "OFF")
  find_package(MPI QUIET COMPONENTS C)
  if(MPI_C_FOUND)
    set(_mpi_found TRUE)
  endif()
endif()
meshscope_resolve(MESHSCOPE_MPI ${_mpi_found} "MPI (libopenmpi-dev)")
