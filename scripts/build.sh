#!/usr/bin/env bash
# Installs what is missing, configures and builds meshscope into build/ (or $MESHSCOPE_BUILD_DIR).
# Extra arguments go to CMake's configure step, e.g. -DMESHSCOPE_CUDA=OFF.
#   MESHSCOPE_TARGETS="a b"  build only these targets (and what they need); default: everything
#   MESHSCOPE_JOBS=N         parallel build jobs (default: number of cores)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MESHSCOPE_BUILD_DIR:-$root/build}
"$root/scripts/setup-deps.sh"
. "$root/scripts/compiler-cache.sh"
jobs=${MESHSCOPE_JOBS:-$(nproc)}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE:-RelWithDebInfo} \
  "${meshscope_cache_flags[@]}" "$@"
targets=()
for t in ${MESHSCOPE_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build" -j "$jobs" "${targets[@]}"
