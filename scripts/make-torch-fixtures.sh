#!/usr/bin/env bash
# Runs a small torch.distributed.pipelining job (CPU, gloo, one process per rank) for each torch
# schedule and writes per-rank Kineto traces plus torch's own schedule CSV, gzip-compressed.
#
#   scripts/make-torch-fixtures.sh [OUT_DIR] [-- extra torch_pipeline_job.py arguments]
#
# OUT_DIR defaults to tests/fixtures/torch. Environment:
#   TORCH_PYTHON     a python that already has torch (skips the venv), e.g. /work/venv/bin/python
#   TORCH_VENV       the venv to create and use otherwise (default .venv-torch, git-ignored)
#   TORCH_VERSION    the torch release installed into it (default 2.15.0)
#   SCHEDULES        space-separated schedule names (default: all seven below)
#   PP MICROBATCHES HIDDEN LAYERS ROWS_PER_MICROBATCH STAGES_PER_RANK   the job's shape
#                    (defaults below; DualPipeV needs microbatches >= 2*PP and gets that at least)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
# The comment above, for --help.
usage() { sed -n '2,/^set -euo pipefail/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; }
out="$root/tests/fixtures/torch"
# An option where OUT_DIR goes is refused, not taken for a folder: `--help` had started a 2 GB
# install of torch on its way to writing fixtures into ./--help. A lone `--` keeps the default.
if [[ $# -gt 0 && "$1" != "--" ]]; then
  case "$1" in
    -h | --help) usage; exit 0 ;;
    -*)
      echo "make-torch-fixtures: unknown option '$1': give OUT_DIR first, then -- and" \
        "torch_pipeline_job.py's arguments (see --help)" >&2
      exit 2
      ;;
  esac
  out="$1"
  shift
fi
[[ "${1:-}" == "--" ]] && shift

schedules="${SCHEDULES:-GPipe 1F1B Interleaved1F1B LoopedBFS InterleavedZeroBubble ZBVZeroBubble DualPipeV}"
pp="${PP:-4}"
microbatches="${MICROBATCHES:-4}"
hidden="${HIDDEN:-16}"
layers="${LAYERS:-1}"
rows_per_microbatch="${ROWS_PER_MICROBATCH:-2}"
stages_per_rank="${STAGES_PER_RANK:-2}"

if [[ -n "${TORCH_PYTHON:-}" ]]; then
  python="$TORCH_PYTHON"
else
  venv="${TORCH_VENV:-$root/.venv-torch}"
  if [[ ! -x "$venv/bin/python" ]]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet "torch==${TORCH_VERSION:-2.15.0}"
  fi
  python="$venv/bin/python"
fi
"$python" -c "import torch; print('torch', torch.__version__)"

mkdir -p "$out"
for s in $schedules; do
  dir="$out/$s"
  mb="$microbatches"
  if [[ "$s" == DualPipeV && "$mb" -lt $((2 * pp)) ]]; then mb=$((2 * pp)); fi
  rm -rf "$dir"
  cmd=("$python" "$here/torch_pipeline_job.py" --schedule "$s" --pp "$pp"
       --microbatches "$mb" --hidden "$hidden" --layers-per-stage "$layers"
       --batch "$((mb * rows_per_microbatch))" --stages-per-rank "$stages_per_rank" --steps 1 --warmup 1 --out "$dir" "$@")
  echo "== $s"
  if ! "${cmd[@]}" > "$out/$s.log" 2>&1; then
    echo "$s failed; see $out/$s.log" >&2
    exit 1
  fi
  rm -f "$out/$s.log"
  gzip -9 -n -f "$dir"/rank*.json
  echo "   $(ls "$dir" | tr '\n' ' ')"
done

# Two pipeline replicas (dp 2 x pp 2): each rank's distributedInfo.pg_config names its groups.
dir="$out/dp2_Interleaved1F1B"
rm -rf "$dir"
echo "== dp2_Interleaved1F1B"
if ! "$python" "$here/torch_pipeline_job.py" --schedule Interleaved1F1B --dp 2 --pp 2 \
    --microbatches 4 --stages-per-rank 2 --hidden 16 --layers-per-stage 1 --batch 8 \
    --out "$dir" > "$out/dp2.log" 2>&1; then
  echo "dp2_Interleaved1F1B failed; see $out/dp2.log" >&2
  exit 1
fi
rm -f "$out/dp2.log"
gzip -9 -n -f "$dir"/rank*.json
