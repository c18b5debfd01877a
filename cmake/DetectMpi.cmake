# MPI would carry the NCCL unique id between nodes (as nccl-tests does) for a multi-node launch of
# the cuda backend; that launch is not implemented yet (the cuda backend runs every rank in one
# process), so MPI is never used: ON is an error rather than a promise, AUTO resolves to OFF.
if(MESHSCOPE_MPI STREQUAL "ON")
  message(FATAL_ERROR "MESHSCOPE_MPI=ON: the multi-node MPI launch of the cuda backend is not "
                      "implemented yet (the cuda backend runs all ranks in one process); "
                      "configure with MESHSCOPE_MPI=AUTO or OFF")
endif()
set(MESHSCOPE_MPI_ENABLED OFF)
if(MESHSCOPE_MPI STREQUAL "AUTO")
  message(STATUS "meshscope: MESHSCOPE_MPI: multi-node launch not implemented yet, so OFF")
endif()
