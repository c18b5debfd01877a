#!/usr/bin/env bash
# Configures an AddressSanitizer + UndefinedBehaviorSanitizer build of the CPU-only project in its
# own folder and runs the test suite in it. Any sanitizer report fails its test, so the script.
#   MESHSCOPE_SANITIZE_BUILD_DIR  build folder (default build-sanitize)
#   MESHSCOPE_SANITIZE_TARGETS    build only these targets (default: all)
#   MESHSCOPE_SANITIZE_TESTS      ctest -R regex of the tests to run (default: all)
#   MESHSCOPE_SANITIZE_EXCLUDE    ctest -E regex of the tests not to run (default: the two below)
#   MESHSCOPE_JOBS                parallel build and test jobs (default 2)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MESHSCOPE_SANITIZE_BUILD_DIR:-$root/build-sanitize}
jobs=${MESHSCOPE_JOBS:-2}

# -O1 keeps the instrumented build and its tests quick; -g1 is enough for symbolized reports.
. "$root/scripts/compiler-cache.sh"
cmake -S "$root" -B "$build" "${meshscope_cache_flags[@]}" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
  -DCMAKE_C_FLAGS_DEBUG="-O1 -g1" -DMESHSCOPE_SANITIZE=ON -DMESHSCOPE_CUDA=OFF \
  -DMESHSCOPE_GUI=OFF -DMESHSCOPE_MPI=OFF -DMESHSCOPE_BENCH=OFF -DMESHSCOPE_TESTS=ON >/dev/null
if [ -n "${MESHSCOPE_SANITIZE_TARGETS:-}" ]; then
  # shellcheck disable=SC2086
  cmake --build "$build" -j "$jobs" --target $MESHSCOPE_SANITIZE_TARGETS
else
  cmake --build "$build" -j "$jobs"
fi

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# Left out under the sanitizers by default, to keep the test command within its 8 minutes: the
# tests that re-run whole programs on the largest inputs (the full demo, 118 s instrumented; convert
# of the three largest real fixtures, 34-99 s each) and the gpu-check script's test (70 s of shell
# around fake binaries, nothing instrumented). Their code runs instrumented in smaller tests: every
# family on the cpu backend (ExecutorEquivalence.MlpEveryFamilyMatchesOneDevice, RunCli,
# CpuTimeReplay), and convert's strict check and kept ids on the B200 vLLM fixture. All of them run
# uninstrumented in ctest (docs/BENCHMARKS.md, "The test command from a fresh clone").
exclude=${MESHSCOPE_SANITIZE_EXCLUDE-'DemoCli\.RunsEveryFamilyWritesATracePerRunAndAllEqualOneDevice|ConvertRealTrace.*(kineto_2rank|a100_nccl_rank0_no_cpu_op|h800_deepseek)|^gpu_check_script_test$'}
cd "$build"
ctest --output-on-failure -j "$jobs" --timeout 900 ${MESHSCOPE_SANITIZE_TESTS:+-R "$MESHSCOPE_SANITIZE_TESTS"} \
  ${exclude:+-E "$exclude"}
