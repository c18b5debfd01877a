# Sourced by the build scripts: compile through ccache when it is installed. Paths are hashed
# relative to the repository root and the build folder is not hashed, so a fresh clone in another
# folder reuses what an earlier build of the same sources compiled. Sets meshscope_cache_flags
# (CMake arguments); MESHSCOPE_CCACHE=0 turns it off.
meshscope_cache_flags=()
if [ "${MESHSCOPE_CCACHE:-1}" != 0 ] && command -v ccache >/dev/null; then
  export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=true
  meshscope_cache_flags=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
                         -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
