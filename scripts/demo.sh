#!/usr/bin/env bash
# The main job: installs what is missing, builds, and runs `meshscope demo`, which executes every
# schedule family on built-in models with synthetic data and writes one Chrome trace per run.
# It builds only the `meshscope` command and what it links, not the tests or benchmarks.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MESHSCOPE_BUILD_DIR:-$root/build}
MESHSCOPE_TARGETS=meshscope "$root/scripts/build.sh"
exec "$build/meshscope" demo --out "${MESHSCOPE_DEMO_OUT:-$root/out/demo}"
