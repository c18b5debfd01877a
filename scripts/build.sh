#!/usr/bin/env bash
# Installs what is missing, configures and builds meshscope into build/ (or $MESHSCOPE_BUILD_DIR).
# Extra arguments go to CMake's configure step, e.g. -DMESHSCOPE_CUDA=OFF.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MESHSCOPE_BUILD_DIR:-$root/build}
"$root/scripts/setup-deps.sh"
jobs=${MESHSCOPE_JOBS:-$(nproc)}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE:-RelWithDebInfo} "$@"
cmake --build "$build" -j "$jobs"
