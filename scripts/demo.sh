#!/usr/bin/env bash
# The main job: installs what is missing, builds, and runs `meshscope demo`, which executes every
# schedule family on built-in models with synthetic data and writes one Chrome trace per run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MESHSCOPE_BUILD_DIR:-$root/build}
"$root/scripts/build.sh"
exec "$build/meshscope" demo --out "${MESHSCOPE_DEMO_OUT:-$root/out/demo}"
