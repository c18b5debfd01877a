#!/usr/bin/env bash
# The test command: installs what is missing, checks the sources' format, builds with warnings as
# errors, and runs the whole suite with ctest; then runs the suite again under AddressSanitizer +
# UndefinedBehaviorSanitizer (scripts/ci-sanitize.sh) and fuzzes every reader of untrusted bytes
# for a bounded time (scripts/ci-fuzz.sh: FUZZ_SECONDS for each trace importer, half of it for the
# JSON file reader, schedule files, predict --config and predict --from-trace).
# GUI tests start their own Xvfb (tests/gui/with_display.sh) and skip when there is none.
#   MESHSCOPE_QUICK=1   only the build and ctest (skip the sanitizer build and the fuzzers)
#   MESHSCOPE_JOBS=N    parallel build and test jobs (default: number of cores)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MESHSCOPE_BUILD_DIR:-$root/build}
jobs=${MESHSCOPE_JOBS:-$(nproc)}
export MESHSCOPE_JOBS=$jobs

step() { printf '\n== %s (%s)\n' "$1" "$(date +%H:%M:%S)"; }

"$root/scripts/setup-deps.sh"
# A full run writes about 3.5 GB into the clone (build/, build-sanitize/, build-fuzz/: fresh clones
# after .ci/run held 3.3-3.5 GB, `du -sh`); a disk that fills up mid-build ends in a compiler's
# "No space left on device", so say it first.
free_kb=$(df -Pk "$root" | awk 'NR == 2 {print $4}')
if [ -n "$free_kb" ] && [ "$free_kb" -lt $((4 * 1024 * 1024)) ]; then
  echo "test.sh: warning: $((free_kb / 1024)) MiB free on $(df -P "$root" | awk 'NR == 2 {print $6}');" \
    "a full run writes about 3.5 GB" >&2
fi
step "format"
"$root/scripts/check-format.sh"

step "build"
"$root/scripts/build.sh" -DMESHSCOPE_WERROR=ON "$@"

step "test suite"
(cd "$build" && ctest --output-on-failure -j "$jobs" --timeout 600)

if [ "${MESHSCOPE_QUICK:-0}" = 1 ]; then
  echo "MESHSCOPE_QUICK=1: sanitizers and fuzzing skipped"
  exit 0
fi

step "test suite under ASan + UBSan"
"$root/scripts/ci-sanitize.sh"

step "fuzzing the readers of untrusted bytes, two at a time (${FUZZ_SECONDS:-30} s for each importer, half for the others)"
FUZZ_SECONDS=${FUZZ_SECONDS:-30} "$root/scripts/ci-fuzz.sh"

step "all tests passed"
