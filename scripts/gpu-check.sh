#!/usr/bin/env bash
# gpu-check.sh: the GPU checks of meshscope on a machine with one GPU (an H200 in mind), in under
# six minutes, ending with one table:
#   - the CUDA ops against the CPU reference (meshscope-kernel-check);
#   - the GPU GoogleTests where they were built (cuda_*, cupti_*);
#   - naive, GPipe, 1F1B, interleaved, ZB-H1, TP and DP on 4 virtual devices (cuda-virtual,
#     CUPTI tracer): equal to one device, measured bubble fraction against the closed form,
#     CUPTI records dropped;
#   - the cuda backend (NCCL) with one rank, and a pipeline over up to 4 GPUs where present;
#   - profiler overhead: step time with CUPTI capture against the host-clock tracer (target < 2%).
#
# Usage:
#   scripts/gpu-check.sh [--out DIR] [--build-dir DIR] [--prebuilt DIR] [--dry-run]
#   scripts/gpu-check.sh --bundle DIR [--build-dir DIR]
#     --bundle DIR    on the build machine: copy the stripped binaries the check needs, and the
#                     non-CUDA, non-libc libraries they load, into DIR (a few MB; carry it to the
#                     GPU machine, whose CUDA libraries are used there).
#     --prebuilt DIR  on the GPU machine: use a bundle instead of building.
#     --dry-run       skip nothing that needs no GPU; GPU rows report why they were skipped.
#     --cpu-plumbing  run every step on the cpu backend with the host tracer and small models:
#                     checks this script's own parsing on a machine without a GPU (not a result).
# Without --prebuilt the script configures and builds here (GUI and benchmarks off; tests only if
# GoogleTest is found). NCCL, CUPTI and cuBLAS are looked up under /usr/local/cuda* and in the
# Python packages nvidia-nccl-cu13, nvidia-cuda-cupti and nvidia-cublas.
# Exit status: 0 when every check that ran passed, 1 otherwise, 2 on bad usage.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=""
build_dir="$root/build-cuda"
prebuilt=""
bundle=""
dry_run=0
backend=cuda-virtual  # what the schedule rows run on; --cpu-plumbing switches both
capture=cupti
start_s=$(date +%s)
budget_s=350  # of the 360 s allowed: the table must get printed

while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --build-dir) build_dir=$2; shift 2 ;;
    --prebuilt) prebuilt=$2; shift 2 ;;
    --bundle) bundle=$2; shift 2 ;;
    --dry-run) dry_run=1; shift ;;
    --cpu-plumbing) backend=cpu; capture=host; shift ;;
    -h|--help) sed -n '2,/^set -uo/{/^#/p}' "$0"; exit 0 ;;
    *) echo "gpu-check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
out=${out:-$(mktemp -d /tmp/gpu-check.XXXXXX)}
mkdir -p "$out"
results="$out/results.tsv"
: > "$results"

log() { printf 'gpu-check: %s\n' "$*" >&2; }
left_s() { echo $(( budget_s - ($(date +%s) - start_s) )); }
# row SECTION NAME STATUS DETAIL: one line of the final table.
row() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >> "$results"; }

# --- CUDA libraries ----------------------------------------------------------------------------
python_dirs() {
  command -v python3 > /dev/null || return 0
  python3 - <<'PY' 2>/dev/null
import site, sys, glob, os
dirs = set(site.getsitepackages() + [site.getusersitepackages()])
dirs.update(p for p in sys.path if p.endswith(("site-packages", "dist-packages")))
for d in sorted(dirs):
    for lib in glob.glob(os.path.join(d, "nvidia", "*", "lib")):
        print(lib)
PY
}

lib_dirs=()
find_cuda_libs() {
  local candidates=() d
  for d in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib \
           /usr/local/cuda/extras/CUPTI/lib64 /usr/local/cuda-*/lib64 \
           /usr/local/cuda-*/extras/CUPTI/lib64 /usr/lib/x86_64-linux-gnu; do
    [[ -d $d ]] && candidates+=("$d")
  done
  while IFS= read -r d; do candidates+=("$d"); done < <(python_dirs)
  local lib found
  for lib in libcublas.so.13 libcublasLt.so.13 libcupti.so.13 libnccl.so.2; do
    found=""
    for d in "${candidates[@]}"; do
      if [[ -e $d/$lib ]]; then found=$d; break; fi
    done
    if [[ -n $found ]]; then
      [[ " ${lib_dirs[*]-} " == *" $found "* ]] || lib_dirs+=("$found")
      row setup "$lib" ok "$found"
    else
      row setup "$lib" MISSING "not under /usr/local/cuda* nor in Python's nvidia/* packages"
    fi
  done
  local joined
  joined=$(IFS=:; echo "${lib_dirs[*]-}")
  export LD_LIBRARY_PATH="${joined}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  # NCCL headers for a build from the Python package (cmake/DetectCuda.cmake reads NCCL_HOME).
  for d in "${lib_dirs[@]-}"; do
    if [[ -e $d/libnccl.so.2 && -e $d/../include/nccl.h ]]; then
      NCCL_HOME=$(cd "$d/.." && pwd); export NCCL_HOME
    fi
  done
}

describe_gpu() {
  local gpu="none found"
  if command -v nvidia-smi > /dev/null; then
    gpu=$(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null \
          | head -1)
  fi
  row setup gpu info "${gpu:-nvidia-smi gave nothing}"
  row setup date info "$(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname)"
}

# --- Binaries ----------------------------------------------------------------------------------
bin=""
build_here() {
  command -v cmake > /dev/null || { row build cmake FAIL "cmake not found"; return 1; }
  # MPI off: the check runs in one process, and a GPU machine's MPI need not be complete.
  local common=(-S "$root" -B "$build_dir" -DMESHSCOPE_GUI=OFF -DMESHSCOPE_CUDA=ON
                -DMESHSCOPE_MPI=OFF -DMESHSCOPE_BENCH=OFF -DCMAKE_BUILD_TYPE=Release)
  local tests=ON
  if ! cmake "${common[@]}" -DMESHSCOPE_TESTS=ON > "$out/configure.log" 2>&1; then
    tests=OFF  # most likely no GoogleTest here: build the tools without the suite
    if ! cmake "${common[@]}" -DMESHSCOPE_TESTS=OFF > "$out/configure.log" 2>&1; then
      row build configure FAIL "see $out/configure.log: $(grep -m1 -i 'error' "$out/configure.log")"
      return 1
    fi
  fi
  local targets=(meshscope meshscope-kernel-check)
  if [[ $tests == ON ]]; then
    targets+=(cuda_ops_test cuda_backend_test cuda_virtual_fabric_test cupti_decoder_test
              cupti_clock_test cupti_capture_test cupti_timeline_test cupti_tracer_test)
  fi
  local t0; t0=$(date +%s)
  if ! timeout "$(( $(left_s) - 120 ))" cmake --build "$build_dir" -j "$(nproc)" \
         --target "${targets[@]}" > "$out/build.log" 2>&1; then
    row build compile FAIL "see $out/build.log: $(grep -m1 -E 'error|Error' "$out/build.log")"
    return 1
  fi
  row build compile ok "$(( $(date +%s) - t0 )) s, tests $tests, $build_dir"
  bin=$build_dir
}

make_bundle() {
  local dest=$1 f
  mkdir -p "$dest/lib"
  for f in meshscope meshscope-kernel-check; do
    [[ -x $build_dir/$f ]] || { echo "gpu-check: $build_dir/$f missing: build it first" >&2; exit 1; }
    strip -o "$dest/$f" "$build_dir/$f"
  done
  for f in "$build_dir"/tests/*/cuda_*_test "$build_dir"/tests/*/cupti_*_test; do
    [[ -x $f ]] && strip -o "$dest/$(basename "$f")" "$f"
  done
  # The libraries that are neither CUDA's (taken from the GPU machine) nor the C library's.
  ldd "$dest"/* 2>/dev/null | awk '/=> \// {print $3}' | sort -u | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so*|libm.so*|libdl.so*|librt.so*|libpthread.so*|libutil.so*|ld-linux*) ;;
      libcublas*|libcupti*|libnccl*|libcudart*|libcuda.so*) ;;
      *) cp -L "$lib" "$dest/lib/" ;;
    esac
  done
  git -C "$root" rev-parse HEAD > "$dest/COMMIT" 2>/dev/null
  du -sh "$dest" >&2
  echo "bundle: $dest (carry it; run scripts/gpu-check.sh --prebuilt $dest there)" >&2
}

# --- Checks ------------------------------------------------------------------------------------
kernel_checks() {
  local log_file="$out/kernel-check.log" status
  timeout 120 "$bin/meshscope-kernel-check" > "$log_file" 2>&1
  status=$?
  case $status in
    0|1)
      local summary
      summary=$(python3 - "$log_file" <<'PY'
import sys, re, collections
worst = collections.defaultdict(float)
n = failed = 0
for line in open(sys.argv[1]):
    m = re.match(r"(ok|FAIL)\s+(\S+)\s+(\w+).*rel_err (\S+)\s+tol (\S+)", line)
    if not m:
        continue
    n += 1
    failed += m.group(1) == "FAIL"
    worst[m.group(5)] = max(worst[m.group(5)], float(m.group(4)))
print(f"{n - failed}/{n} ok; worst rel err by tolerance: " +
      ", ".join(f"{v:.1e} (tol {k})" for k, v in sorted(worst.items())))
PY
)
      row kernels "CUDA ops vs CPU" "$([[ $status == 0 ]] && echo ok || echo FAIL)" "$summary" ;;
    2) row kernels "CUDA ops vs CPU" SKIP "$(head -1 "$log_file")" ;;
    *) row kernels "CUDA ops vs CPU" FAIL "exit $status, see $log_file" ;;
  esac
}

gtests() {
  local t name status summary
  for t in "$bin"/cuda_*_test "$bin"/cupti_*_test "$bin"/tests/*/cuda_*_test "$bin"/tests/*/cupti_*_test; do
    [[ -x $t ]] || continue
    name=$(basename "$t")
    timeout 120 "$t" --gtest_brief=1 > "$out/$name.log" 2>&1
    status=$?
    summary=$(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/$name.log" | sed 's/\[ *//; s/ *\]//' \
              | tr '\n' ' ')
    row gtest "$name" "$([[ $status == 0 ]] && echo ok || echo FAIL)" "${summary:-exit $status}"
  done
}

# run_schedule LABEL OUTFILE ARGS...: meshscope run on 4 virtual devices, JSON summary to OUTFILE.
run_schedule() {
  local label=$1 json=$2; shift 2
  timeout 150 "$bin/meshscope" run --backend "$backend" --json "$@" > "$json" 2> "$json.err"
}

# Closed-form bubble fraction of a family (equal stage costs).
closed_form() {
  python3 -c "
p, m, v, fam = $1, $2, $3, '$4'
f = {'naive': (p - 1) / p, 'gpipe': (p - 1) / (m + p - 1), '1f1b': (p - 1) / (m + p - 1),
     'interleaved': (p - 1) / (v * m + p - 1), 'zb-h1': (p - 1) / (3 * m + p - 1)}
print(f.get(fam, 0.0))"
}

# Bubble fraction and step time of a trace's steps after the first (which loads kernels, sizes
# memory pools and picks cuBLAS algorithms), through `meshscope analyze`.
steady_bubble() {
  local trace=$1 steady="${1%.json}.steady.json"
  python3 - "$trace" "$steady" <<'PY' || { echo "?"; return; }
import json, sys
d = json.load(open(sys.argv[1]))
d["meshscope"]["steps"] = d["meshscope"]["steps"][1:]
json.dump(d, open(sys.argv[2], "w"))
PY
  "$bin/meshscope" analyze "$steady" --json > "$steady.analysis" 2>/dev/null || { echo "?"; return; }
  json_field "$steady.analysis" \
    "'%.3f (step %.2f ms)' % (d['overall']['bubble_fraction'], d['step_time_ns'] / 1e6)"
}

json_field() {  # json_field FILE PYTHON-EXPRESSION-ON-d
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1" 2>/dev/null
}

# The families on 4 virtual devices: label, family, mesh flags, microbatches, virtual stages.
families=(
  "naive|naive|--pp 4|4|1"
  "gpipe|gpipe|--pp 4|8|1"
  "1f1b|1f1b|--pp 4|8|1"
  "interleaved|interleaved|--pp 4|8|2"
  "zb-h1|zb-h1|--pp 4|8|1"
  "tp|tp|--tp 4|2|1"
  "dp|dp|--dp 4|2|1"
)
small_model=(--model mlp --layers 8 --hidden 128 --batch 64)
large_model=(--model mlp --layers 8 --hidden 1024 --batch 2048)
if [[ $backend == cpu ]]; then large_model=("${small_model[@]}"); fi

schedule_checks() {
  local entry label fam mesh m v json status
  for entry in "${families[@]}"; do
    IFS='|' read -r label fam mesh m v <<< "$entry"
    [[ $(left_s) -gt 60 ]] || { row schedule "$label" SKIP "out of time"; continue; }
    json="$out/$label.check.json"
    # shellcheck disable=SC2086  # mesh holds two words on purpose
    run_schedule "$label" "$json" --schedule "$fam" $mesh -m "$m" -v "$v" --steps 3 \
      --tracer "$capture" "${small_model[@]}" --out "$out/$label.trace.json"
    status=$?
    if [[ $status != 0 ]]; then
      local why; why=$(tail -1 "$json.err")
      if [[ $why == *"no CUDA device"* ]]; then row schedule "$label" SKIP "$why"
      else row schedule "$label" FAIL "exit $status: $why"; fi
      continue
    fi
    local err equal dropped desc
    err=$(json_field "$json" "'%.1e' % d['max_relative_error']")
    equal=$(json_field "$json" "d['equal_to_one_device']")
    dropped=$(json_field "$out/$label.trace.json" "d['meshscope']['metadata'].get('cupti_dropped_records', '?')")
    desc=$(json_field "$json" "d['backend']")
    row schedule "$label" "$([[ $equal == True && ( $dropped == 0 || $capture == host ) ]] && echo ok || echo FAIL)" \
      "vs 1 device rel err $err; CUPTI dropped $dropped; $desc"
    # Timing: a larger model so kernels, not launches, fill the step (no CPU reference: too slow).
    json="$out/$label.timing.json"
    local trace="$out/$label.timing.trace.json"
    # shellcheck disable=SC2086
    if run_schedule "$label" "$json" --schedule "$fam" $mesh -m "$m" -v "$v" --steps 4 \
         --tracer "$capture" --no-check "${large_model[@]}" --out "$trace"; then
      local measured want
      measured=$(steady_bubble "$trace")
      want=$(closed_form "$( [[ $fam == tp || $fam == dp ]] && echo 1 || echo 4)" "$m" "$v" "$fam")
      row bubble "$label" info "measured $measured vs closed form $(printf '%.3f' "$want")"
    else
      row bubble "$label" FAIL "$(tail -1 "$json.err")"
    fi
  done
}

# The cuda backend (one rank per GPU, NCCL): a single rank on one GPU; a pipeline over up to 4 GPUs
# where there are that many.
cuda_backend_checks() {
  local gpus=0 json why
  command -v nvidia-smi > /dev/null && gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
  local cases=("dp1|--schedule dp --dp 1 -m 2")
  if [[ $gpus -ge 2 ]]; then
    local p=$(( gpus < 4 ? gpus : 4 ))
    cases+=("1f1b pp$p|--schedule 1f1b --pp $p -m $(( 2 * p ))")
  fi
  local entry label args
  for entry in "${cases[@]}"; do
    IFS='|' read -r label args <<< "$entry"
    json="$out/cuda.$label.json"
    [[ $backend == cpu ]] && { row "cuda backend" "$label" SKIP "cpu plumbing"; continue; }
    # shellcheck disable=SC2086  # args holds several words on purpose
    if timeout 150 "$bin/meshscope" run --backend cuda --json $args --steps 2 \
         "${small_model[@]}" > "$json" 2> "$json.err"; then
      row "cuda backend" "$label" \
        "$([[ $(json_field "$json" "d['equal_to_one_device']") == True ]] && echo ok || echo FAIL)" \
        "vs 1 device rel err $(json_field "$json" "'%.1e' % d['max_relative_error']"); $(json_field "$json" "d['backend']")"
    else
      why=$(tail -1 "$json.err")
      row "cuda backend" "$label" "$([[ $why == *"no CUDA device"* ]] && echo SKIP || echo FAIL)" "$why"
    fi
  done
}

overhead_check() {
  [[ $(left_s) -gt 45 ]] || { row overhead "1f1b pp4" SKIP "out of time"; return; }
  local rep tracer json host=() cupti=()
  for rep in 1 2 3; do
    for tracer in host "$capture"; do
      json="$out/overhead.$tracer.$rep.json"
      if ! run_schedule overhead "$json" --schedule 1f1b --pp 4 -m 8 --steps 8 --tracer "$tracer" \
             --no-check "${large_model[@]}"; then
        local why; why=$(tail -1 "$json.err")
        row overhead "1f1b pp4" "$([[ $why == *"no CUDA device"* ]] && echo SKIP || echo FAIL)" "$why"
        return
      fi
      if [[ ${#host[@]} -lt $rep ]]; then host+=("$(json_field "$json" "d['wall_s'] / 8")")
      else cupti+=("$(json_field "$json" "d['wall_s'] / 8")"); fi
    done
  done
  local verdict
  verdict=$(python3 -c "
import statistics, sys
h = statistics.median(float(x) for x in sys.argv[1].split())
c = statistics.median(float(x) for x in sys.argv[2].split())
o = (c - h) / h * 100
print(('ok' if o < 2 else 'FAIL') + '|median step %.2f ms host-clock tracer, %.2f ms %s tracer: overhead %+.2f%% (target < 2%%)' % (h * 1e3, c * 1e3, sys.argv[3], o))
" "${host[*]}" "${cupti[*]}" "$capture")
  row overhead "1f1b pp4 (3 runs x 8 steps)" "${verdict%%|*}" "${verdict#*|}"
}

print_table() {
  python3 - "$results" <<'PY'
import sys
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1]) if line.strip()]
head = ["section", "check", "status", "detail"]
w = [max(len(r[i]) for r in rows + [head]) for i in range(3)]
print("  ".join(h.ljust(w[i]) if i < 3 else h for i, h in enumerate(head)))
for r in rows:
    print("  ".join(c.ljust(w[i]) if i < 3 else c for i, c in enumerate(r)))
PY
}

# --- Main --------------------------------------------------------------------------------------
if [[ -n $bundle ]]; then
  make_bundle "$bundle"
  exit 0
fi
command -v python3 > /dev/null || { echo "gpu-check: python3 is needed for the JSON and the table" >&2; exit 1; }
find_cuda_libs
describe_gpu
if [[ -n $prebuilt ]]; then
  bin=$(cd "$prebuilt" && pwd)
  [[ -d $bin/lib ]] && export LD_LIBRARY_PATH="$bin/lib:$LD_LIBRARY_PATH"
  row build prebuilt ok "$bin (commit $(cat "$bin/COMMIT" 2>/dev/null || echo unknown))"
else
  build_here || { print_table; exit 1; }
fi
if ! "$bin/meshscope" --version > /dev/null 2>&1; then
  row build start FAIL "$bin/meshscope does not start: $("$bin/meshscope" --version 2>&1 | head -1)"
  print_table
  exit 1
fi
kernel_checks
gtests
schedule_checks
cuda_backend_checks
if [[ $dry_run == 1 ]]; then
  row overhead "1f1b pp4" SKIP "dry run"
else
  overhead_check
fi
row total time info "$(( $(date +%s) - start_s )) s (limit 360 s); logs and traces in $out"
print_table | tee "$out/table.txt"
! grep -qP '\tFAIL\t|\tMISSING\t' "$results"
