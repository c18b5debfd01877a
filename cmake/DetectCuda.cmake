# Finds nvcc, cuBLAS, CUPTI, NVTX and NCCL. Sets MESHSCOPE_CUDA_ENABLED and, when enabled, the
# imported targets CUDA::cudart, CUDA::cublas, CUDA::cublasLt, CUDA::cupti, CUDA::nvtx3 and
# meshscope_nccl. Nothing here needs a GPU or the driver (libcuda) at build time.
set(_cuda_found FALSE)
set(_cuda_missing "nvcc")
if(NOT MESHSCOPE_CUDA STREQUAL "OFF")
  if(NOT DEFINED ENV{CUDACXX} AND NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 90)  # sm_90 SASS plus compute_90 PTX
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    # NCCL ships with the toolkit here; on other machines it may sit in a Python package.
    file(GLOB _nccl_pip_dirs /usr/local/lib/python3*/dist-packages/nvidia/nccl
                             /usr/lib/python3/dist-packages/nvidia/nccl)
    set(_nccl_hints ${CUDAToolkit_LIBRARY_ROOT} ${CUDAToolkit_TARGET_DIR} $ENV{NCCL_HOME} ${_nccl_pip_dirs})
    find_path(MESHSCOPE_NCCL_INCLUDE nccl.h HINTS ${_nccl_hints} PATH_SUFFIXES include)
    find_library(MESHSCOPE_NCCL_LIBRARY NAMES nccl libnccl.so.2 HINTS ${_nccl_hints} PATH_SUFFIXES lib lib64)
    if(TARGET CUDA::cublas AND TARGET CUDA::cupti AND TARGET CUDA::nvtx3
       AND MESHSCOPE_NCCL_INCLUDE AND MESHSCOPE_NCCL_LIBRARY)
      set(_cuda_found TRUE)
      add_library(meshscope_nccl INTERFACE IMPORTED)
      target_include_directories(meshscope_nccl INTERFACE ${MESHSCOPE_NCCL_INCLUDE})
      target_link_libraries(meshscope_nccl INTERFACE ${MESHSCOPE_NCCL_LIBRARY})
    else()
      set(_cuda_missing "cuBLAS, CUPTI, NVTX or NCCL")
    endif()
  endif()
endif()
meshscope_resolve(MESHSCOPE_CUDA ${_cuda_found} "${_cuda_missing}")
