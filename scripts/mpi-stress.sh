#!/usr/bin/env bash
# Runs one two-process mpirun of `meshscope run` RUNS times beside BUSY busy loops (a loaded host,
# as under ctest -j2) and counts the runs that failed: the check of the watchdogs across processes
# (heartbeats, the first barrier) that RELIABILITY.md's figures come from. Each forward takes
# longer than the timeout, so only the heartbeats keep the peer's watchdog quiet.
#   scripts/mpi-stress.sh [BUILD_DIR]   (default build)
#   RUNS (24), BUSY (2), TIMEOUT (0.2 s, meshscope run --timeout)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
runs=${RUNS:-24}
busy=${BUSY:-2}
timeout=${TIMEOUT:-0.2}
[ -x "$build/meshscope" ] || { echo "mpi-stress: no $build/meshscope (build first)" >&2; exit 2; }
command -v mpirun >/dev/null || { echo "mpi-stress: no mpirun on PATH" >&2; exit 2; }

work=$(mktemp -d)
loops=()
cleanup() {
  for p in "${loops[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
# Open MPI refuses root unless told, and its session directory is this script's own.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
  OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_orte_tmpdir_base="$work"
for _ in $(seq 1 "$busy"); do
  (while :; do :; done) &
  loops+=($!)
done

failed=0
for i in $(seq 1 "$runs"); do
  if ! mpirun -n 2 "$build/meshscope" run --model mlp --hidden 768 --layers 2 --batch 2048 \
    --pp 2 -m 1 --steps 1 --timeout "$timeout" --no-check --backend cpu \
    >"$work/out" 2>"$work/err"; then
    failed=$((failed + 1))
    echo "run $i: $(grep -m1 'meshscope: error' "$work/err" || tail -1 "$work/err")"
  fi
done
echo "mpi-stress: $failed of $runs runs failed (--timeout $timeout, $busy busy loops, $(date -u +%F))"
[ "$failed" -eq 0 ]
