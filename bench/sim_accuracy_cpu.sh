#!/bin/bash
# docs/ACCURACY.md section 3: runs A..J of sim/predict/configs/cpu on the CPU backend (five times
# each, interleaved, under SCHED_FIFO so other processes on the machine disturb them less),
# calibrates on A's runs, and prints measured (median of five; a run's step is the mean of its
# steps 2-4) against predicted step times, calibrated and from the catalog alone.
# Usage: bench/sim_accuracy_cpu.sh BUILD_DIR WORK_DIR   (needs root for chrt, and python3)
# MESHSCOPE_REUSE_RUNS=1 skips the runs and evaluates the traces already in WORK_DIR.
set -euo pipefail
build=$(realpath "$1")
configs=$(realpath "$(dirname "$0")/../sim/predict/configs/cpu")
mkdir -p "$2" && cd "$2"
M="$build/meshscope"
common="--model mlp --layers 8 --hidden 512 --batch 64 --steps 4 --no-check --backend cpu"
declare -A args=(
  [A]="--schedule 1f1b --pp 2 -m 8" [B]="--schedule gpipe --pp 2 -m 8" [C]="--schedule 1f1b --pp 2 -m 4"
  [D]="--schedule zb-h1 --pp 2 -m 8" [E]="--schedule dp --dp 2 -m 4" [F]="--schedule tp --tp 2 -m 8"
  [G]="--schedule 1f1b --pp 2 -m 16" [H]="--schedule 1f1b --pp 4 -m 8" [I]="--schedule gpipe --pp 4 -m 8"
  [J]="--schedule 1f1b --dp 2 --pp 2 -m 4")
if [ "${MESHSCOPE_REUSE_RUNS:-0}" != 1 ]; then
  for k in 1 2 3 4 5; do
    for x in A B C D E F G H I J; do
      chrt -f 1 "$M" run ${args[$x]} $common -o "$x.r$k.json" > /dev/null
    done
  done
fi
"$M" calibrate A.r*.json -o calib.json
for x in A B C D E F G H I J; do
  cfg=$(ls "$configs"/$x-*.json)
  steps=""
  for t in $x.r*.json; do
    steps="$steps $("$M" analyze "$t" --json | python3 -c \
      'import json,sys; w=json.load(sys.stdin)["windows"][1:]; print(sum(s["duration_ns"] for s in w)/len(w)/1e6)')"
  done
  cal=$("$M" predict --config "$cfg" --calibration calib.json --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["step_time_s"]*1e3)')
  cat=$("$M" predict --config "$cfg" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["step_time_s"]*1e3)')
  python3 - "$x" "$cal" "$cat" $steps <<'PY'
import statistics, sys
x, cal, cat, steps = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sorted(map(float, sys.argv[4:]))
m = statistics.median(steps)
print(f"{x}: measured {m:.0f} ms (runs {', '.join(f'{s:.0f}' for s in steps)}); "
      f"calibrated {cal:.0f} ms ({100 * (cal - m) / m:+.1f}%); catalog {cat:.0f} ms ({100 * (cat - m) / m:+.0f}%)")
PY
done
