#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs the whole suite with ctest.
# GUI tests run under Xvfb (xvfb-run) with Mesa's software OpenGL.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MESHSCOPE_BUILD_DIR:-$root/build}
"$root/scripts/build.sh" "$@"
cd "$build"
ctest --output-on-failure -j "${MESHSCOPE_JOBS:-$(nproc)}" --timeout 600
