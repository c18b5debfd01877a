#!/usr/bin/env bash
# For each torch pipelining job folder given: every rank's compute share of the step as
# `meshscope analyze --json` reports it and as scripts/torch_compute_share.py computes it from the
# raw JSON, and whether `meshscope schedules --from-trace --format torch-csv` gives torch's own
# CSV of the run byte for byte (compute_comms where torch wrote one, else compute_only).
#   scripts/torch-accuracy-table.sh [--bin build/meshscope] JOB_DIR...
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="$here/../build/meshscope"
usage="usage: scripts/torch-accuracy-table.sh [--bin MESHSCOPE] JOB_DIR..."
# A missing --bin value or job folder is one line naming it, before the table's header: no
# arguments had printed an empty table with exit 0, and a missing folder a Python traceback.
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then echo "$usage"; exit 0; fi
if [[ "${1:-}" == "--bin" ]]; then
  [[ $# -ge 2 ]] || { echo "torch-accuracy-table: --bin needs the meshscope binary; $usage" >&2; exit 2; }
  bin="$2"
  shift 2
fi
[[ $# -gt 0 ]] || { echo "torch-accuracy-table: no job folder given; $usage" >&2; exit 2; }
[[ -x "$bin" ]] || { echo "torch-accuracy-table: $bin: no such program (build it, or give --bin)" >&2; exit 1; }
for dir in "$@"; do
  [[ -d "$dir" ]] || { echo "torch-accuracy-table: $dir: not a folder (a torch pipelining job's, from torch_pipeline_job.py --out)" >&2; exit 1; }
done
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "| job | schedule | pp | microbatches | steps | rank | analyze compute % | raw JSON compute % | difference (points) | torch CSV |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for dir in "$@"; do
  name="$(basename "$dir")"
  python3 "$here/torch_compute_share.py" "$dir" --json > "$tmp/py.json"
  "$bin" analyze --json "$dir" 2>/dev/null > "$tmp/ms.json"
  csv="$dir/schedule.compute_comms.csv"
  [[ -f "$csv" ]] || csv="$dir/schedule.compute_only.csv"
  if "$bin" schedules --from-trace "$dir" --format torch-csv -o "$tmp/rec.csv" 2>/dev/null &&
     cmp -s "$tmp/rec.csv" "$csv"; then
    same="identical ($(basename "$csv" .csv | sed 's/schedule.//'))"
  else
    rows="$( (diff "$tmp/rec.csv" "$csv" || true) | grep -E '^[0-9]' | sed 's/[acd].*//' | paste -sd, -)"
    same="differs in rows ${rows:-?}"
  fi
  python3 - "$name" "$dir/job.meta" "$tmp/ms.json" "$tmp/py.json" "$same" <<'PY'
import json, sys
name, meta, ms, py, same = sys.argv[1:]
meta, ms, py = json.load(open(meta)), json.load(open(ms)), json.load(open(py))
for d in ms["devices"]:
    a = 100 * d["compute_ns"] / d["window_ns"]
    b = 100 * py[str(d["rank"])]["share"]
    print(f"| {name} | {meta['schedule']} | {meta['pp']} | {meta['microbatches']} | {len(ms['windows'])} "
          f"| {d['rank']} | {a:.2f} | {b:.2f} | {a - b:+.2f} | {same} |")
PY
done
