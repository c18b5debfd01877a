#!/usr/bin/env bash
# The same run as rank threads in one process and as one process per rank under mpirun,
# alternated N times; prints the median wall time of the steps (RunResult::wall_s) of each and
# their ratio. Usage: bench/mpi_vs_threads.sh [N] [meshscope run arguments...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${MESHSCOPE_BUILD_DIR:-$root/build}/meshscope
n=${1:-5}
shift || true
args=("$@")
[ ${#args[@]} -eq 0 ] && args=(--schedule 1f1b --pp 4 --layers 16 --hidden 256 --steps 3)
ranks=$("$bin" run "${args[@]}" --json --no-check | python3 -c \
  'import json,sys; m=json.load(sys.stdin)["mesh"]; import re; print(eval("*".join(re.findall(r"\d+", m))))')
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
wall() { python3 -c 'import json,sys; print(json.load(sys.stdin)["wall_s"])'; }
threads=(); procs=()
for i in $(seq "$n"); do
  threads+=("$("$bin" run "${args[@]}" --json --no-check | wall)")
  procs+=("$(mpirun -n "$ranks" "$bin" run "${args[@]}" --json --no-check | wall)")
done
python3 - "${threads[*]}" "${procs[*]}" <<'PY'
import statistics, sys
t = [float(x) for x in sys.argv[1].split()]
p = [float(x) for x in sys.argv[2].split()]
mt, mp = statistics.median(t), statistics.median(p)
print(f"threads:   median {mt*1e3:.1f} ms over {len(t)} runs")
print(f"processes: median {mp*1e3:.1f} ms over {len(p)} runs")
print(f"processes / threads: {mp/mt:.2f}")
PY
