#!/usr/bin/env bash
# `calibrate --gemm-rates` on a synthetic Kineto trace recorded with shapes, beside `analyze` of
# the same file (the whole import), alternated N times; prints the median wall time and peak RSS
# of each and their ratio. The trace: OPS aten::mm ops (three shapes) on one thread, each
# launching its GEMM kernel, and a non-GEMM kernel launched between them, as a step's elementwise
# work is (5 events an op).
# Usage: bench/gemm_trace_rates.sh [N] [OPS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${MESHSCOPE_BUILD_DIR:-$root/build}/meshscope
n=${1:-5}
ops=${2:-200000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$ops" "$work/trace.json" <<'PY'
import sys
ops, path = int(sys.argv[1]), sys.argv[2]
shapes = [(4096, 4096, 4096), (2048, 8192, 2048), (8192, 1024, 4096)]
with open(path, "w") as f:
    f.write('{"record_shapes":1,"traceEvents":[')
    for i in range(ops):
        m, k, n = shapes[i % 3]
        ts = 30.0 * i
        us = 2 * m * n * k / 6e14 * 1e6
        f.write(("," if i else "") +
                '{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":%.3f,"dur":10,'
                '"args":{"Input Dims":[[%d,%d],[%d,%d]],"Input type":["c10::BFloat16","c10::BFloat16"]}},'
                '{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":%.3f,'
                '"dur":3,"args":{"correlation":%d}},'
                '{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":%.3f,"dur":%.3f,'
                '"args":{"correlation":%d}},'
                '{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":%.3f,'
                '"dur":3,"args":{"correlation":%d}},'
                '{"ph":"X","cat":"kernel","name":"elementwise","pid":0,"tid":7,"ts":%.3f,"dur":5,'
                '"args":{"correlation":%d}}'
                % (ts, m, k, k, n, ts + 2, 2 * i, ts + 5, us, 2 * i, ts + 15, 2 * i + 1, ts + 20,
                   2 * i + 1))
    f.write("]}")
PY
echo "trace: $(stat -c %s "$work/trace.json") bytes, $ops GEMM ops, $((5 * ops)) events"
measure() {  # prints "seconds kilobytes"
  /usr/bin/time -f '%e %M' -o "$work/time" "$@" > /dev/null 2> /dev/null
  cat "$work/time"
}
gemm=() analyze=()
for i in $(seq "$n"); do
  gemm+=("$(measure "$bin" calibrate --gemm-rates "$work/trace.json" --hardware h100-sxm)")
  analyze+=("$(measure "$bin" analyze "$work/trace.json")")
done
python3 - "$(printf '%s\n' "${gemm[@]}")" "$(printf '%s\n' "${analyze[@]}")" <<'PY'
import statistics, sys
def parse(text):
    rows = [line.split() for line in text.splitlines() if line.strip()]
    return [float(r[0]) for r in rows], [int(r[1]) for r in rows]
gs, gk = parse(sys.argv[1])
as_, ak = parse(sys.argv[2])
mg, ma = statistics.median(gs), statistics.median(as_)
print(f"calibrate --gemm-rates: median {mg:.2f} s, peak RSS {max(gk) / 1024:.0f} MiB over {len(gs)} runs")
print(f"analyze:                median {ma:.2f} s, peak RSS {max(ak) / 1024:.0f} MiB over {len(as_)} runs")
print(f"calibrate / analyze: {mg / ma:.2f}")
PY
