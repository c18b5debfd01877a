# MPI is optional: it only carries the NCCL unique id between nodes, as nccl-tests does.
set(_mpi_found FALSE)
if(NOT MESHSCOPE_MPI STREQUAL "OFF" AND MESHSCOPE_CUDA_ENABLED)
  find_package(MPI QUIET COMPONENTS CXX)
  if(MPI_CXX_FOUND)
    set(_mpi_found TRUE)
  endif()
endif()
meshscope_resolve(MESHSCOPE_MPI ${_mpi_found} "MPI (and MESHSCOPE_CUDA)")
