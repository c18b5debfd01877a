#!/usr/bin/env bash
# gpu-check.sh: the GPU checks of meshscope in one short lease of a machine with one GPU (an H100
# or an H200: the GEMM rows use the catalog entry of the board nvidia-smi names), within 420 s by
# default, from a bundle of binaries built elsewhere. In order of value:
#   1. versions (driver, runtime, cuBLAS, CUPTI, NCCL as the loaded libraries report them);
#   2. the CUDA ops against the CPU reference (meshscope-kernel-check);
#   2b. bf16 GEMM rates of OpenXLA's 87 sm_90 shapes, then 8192^3's burst (5 calls after 1 s
#      idle) and its rate held 20 s with the board's power sampled (meshscope-kernel-check
#      --gemm-rates, --sustained; gemm-power.csv), checked against the board's entry's GEMM model
#      by `meshscope calibrate --gemm-rates --held-rates` (gemm-rates.csv, held.csv and the check
#      kept for docs/GPU_RESULTS.md, and ENTRY-measured.json: the entry with its GEMM ceiling
#      scaled by that fit and its sustained share from the held rate, --write-hardware; the share
#      held over burst is what docs/ACCURACY.md item 52's rule reads); then the development rows'
#      own 84 GEMMs (scripts/dev_gemm_shapes.csv) beside the model with that fit (`calibrate
#      --compare`; dev-gemm-rates.csv and dev-gemm-check.json kept);
#   2c. Transformer Engine's SM margin: the NeMo rows' pipelined reduce-scatter GEMMs whole, in
#      TE's chunks, with and without its SM count target, beside a kernel holding the
#      communication's SMs (meshscope-kernel-check --sm-margin; sm-margin-conn{1,8}.csv kept);
#   2d. FP8 GEMM rates (cuBLASLt e4m3, meshscope-kernel-check --gemm-rates --fp8) at TileLang's
#      seven shapes, beside TileLang's rates and the board's entry's FP8 model, and the entry's
#      two FP8 figures fitted to them (fp8-gemm-rates.csv kept, and ENTRY-fp8-measured.json:
#      the entry with its FP8 ceiling scaled by `calibrate --fp8`; docs/ACCURACY.md item 51's rule);
#   3. 1F1B on 4 virtual devices (cuda-virtual, CUPTI tracer): equal to one device, CUPTI recorded
#      and labelled ops, dropped none; the green-context split it got; its bubble;
#   4. GPipe, interleaved, ZB-H1, naive, TP and DP the same way; the cuda backend (NCCL), 1 rank;
#   5. CUPTI overhead: steady-state step period with CUPTI against the host-clock tracer, from
#      5 alternating pairs of runs, each measured on its steps after the first;
#   6. the GPU GoogleTests (kernels_cuda_tests, profiler_cuda_tests);
#   7. compute-sanitizer memcheck on the kernel check, when time remains (the one optional row).
# Each row is printed as it is produced; the table, results.tsv and gpu-check.tar.gz (logs, JSON,
# traces under 4 MB) are written on exit, also when the script is killed or runs out of time.
#
# Usage:
#   scripts/gpu-check.sh [--prebuilt DIR] [--out DIR] [--budget SECONDS] [--cpu-plumbing]
#                        [--only LIST]
#   scripts/gpu-check.sh --build [--build-dir DIR] [--out DIR] [--budget SECONDS]
#   scripts/gpu-check.sh --bundle DIR [--build-dir DIR]
#     --prebuilt DIR  use the bundle in DIR (default: build-cuda-bundle beside scripts/).
#     --build         configure and build on this machine instead (needs CMake and the CUDA
#                     toolkit; counts against the budget).
#     --bundle DIR    on the build machine: put the stripped binaries the check needs, and the
#                     libraries they load that are neither CUDA's nor the C library's, into DIR.
#     --budget S      the whole run's limit in seconds (default 420); every step runs under
#                     `timeout`, capped by the time left.
#     --cpu-plumbing  every schedule row on the cpu backend with the host tracer: checks this
#                     script's own parsing without a GPU (its numbers mean nothing).
#     --only LIST     run only these groups of rows (comma-separated: kernels (2), gemm (2b-2d),
#                     schedule (3-4), overhead (5), gtest (6), sanitizer (7)); the versions row
#                     always runs. For a rerun of what failed or ran out of time on a short lease.
# CUDA libraries are looked up under /usr/local/cuda* and in Python's nvidia/* packages
# (nvidia-cublas, nvidia-cuda-cupti, nvidia-nccl-cu13 wheels), after the directories in
# GPU_CHECK_LIB_DIRS (colon-separated); CMake is needed only for --build.
# A row that cannot run is SKIP when nvidia-smi lists no GPU and FAIL when it lists one.
# Exit status: 0 when nvidia-smi lists a GPU and every row ran and passed; 1 when a row failed,
# a library is missing or the run was cut short; 2 on bad usage; 3 when no GPU is listed (then
# nothing GPU-related was tested, whatever the rows say: "no GPU: nothing tested").
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
parse="$root/scripts/gpu_check_parse.py"  # the JSON reading and the arithmetic
out=""
build_dir="$root/build-cuda"
prebuilt="$root/build-cuda-bundle"
build=0
bundle=""
backend=cuda-virtual  # what the schedule rows run on; --cpu-plumbing switches both
capture=cupti
budget_s=420
start_s=$(date +%s)
only=""  # --only: ",kernels,gemm," (empty: every group)
groups=(kernels gemm schedule overhead gtest sanitizer)

while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) out=${2:?}; shift 2 ;;
    --build-dir) build_dir=${2:?}; shift 2 ;;
    --prebuilt) prebuilt=${2:?}; shift 2 ;;
    --build) build=1; shift ;;
    --bundle) bundle=${2:?}; shift 2 ;;
    --budget) budget_s=${2:?}; shift 2 ;;
    --cpu-plumbing) backend=cpu; capture=host; shift ;;
    --only) only=",${2:?},"; shift 2 ;;
    -h|--help) sed -n '2,/^set -uo/{/^#/p}' "$0"; exit 0 ;;
    *) echo "gpu-check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ $budget_s =~ ^[0-9]+$ && $budget_s -ge 30 ]] || { echo "gpu-check: --budget needs >= 30 seconds" >&2; exit 2; }
if [[ -n $only ]]; then
  IFS=, read -ra asked <<< "${only:1:${#only}-2}"
  for g in "${asked[@]}"; do
    [[ " ${groups[*]} " == *" $g "* ]] || { echo "gpu-check: --only: unknown group '$g' (one of: ${groups[*]})" >&2; exit 2; }
  done
fi
wanted() { [[ -z $only || $only == *",$1,"* ]]; }

# The terminal's stdout and stderr, kept on 3 and 4: rows and the final table go there even when
# a signal's trap runs inside a step whose output is redirected into its log.
exec 3>&1 4>&2
log() { printf 'gpu-check: %s\n' "$*" >&4; }

# --- Bundle (build machine) ---------------------------------------------------------------------
make_bundle() {
  local dest=$1 f
  mkdir -p "$dest/lib"
  for f in meshscope meshscope-kernel-check libmeshscope-gpu.so; do
    [[ -x $build_dir/$f ]] || { log "$build_dir/$f missing: build it first (docs/GPU_RESULTS.md)"; exit 1; }
    strip -o "$dest/$f" "$build_dir/$f"
  done
  for f in "$build_dir"/tests/*cuda_tests; do
    [[ -x $f ]] && strip -o "$dest/$(basename "$f")" "$f"
  done
  # The libraries that are neither CUDA's (taken from the GPU machine) nor the C library's.
  ldd "$dest"/* 2>/dev/null | awk '/=> \// {print $3}' | sort -u | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so*|libm.so*|libdl.so*|librt.so*|libpthread.so*|libutil.so*|ld-linux*) ;;
      libcublas*|libcupti*|libnccl*|libcudart*|libcuda.so*|libnvidia*) ;;
      *) cp -L "$lib" "$dest/lib/" ;;
    esac
  done
  git -C "$root" rev-parse HEAD > "$dest/COMMIT" 2>/dev/null
  log "bundle: $dest, $(du -sh "$dest" | cut -f1) (carry it; run scripts/gpu-check.sh --prebuilt $dest there)"
}
if [[ -n $bundle ]]; then make_bundle "$bundle"; exit 0; fi

command -v python3 > /dev/null || { log "python3 is needed for the JSON and the table"; exit 1; }
out=${out:-$(mktemp -d /tmp/gpu-check.XXXXXX)}
mkdir -p "$out"
results="$out/results.tsv"
: > "$results"

# --- Rows, time, the table on exit --------------------------------------------------------------
gpu_listed=0
# Every nvidia-smi call is bounded: a hung one inside $(...) would hold off the traps that print
# the table and write the archive.
if command -v nvidia-smi > /dev/null && timeout 10 nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  gpu_listed=1
fi

# row SECTION CHECK STATUS DETAIL: appends to results.tsv and prints it at once. SKIP turns into
# FAIL when a GPU is listed: then nothing had a reason not to run.
row() {
  local status=$3 detail=$4
  if [[ $status == SKIP && $gpu_listed == 1 ]]; then
    status=FAIL
    detail="did not run although nvidia-smi lists a GPU: $detail"
  fi
  detail=${detail//$'\t'/ }
  detail=${detail//$'\n'/ }
  printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$status" "$detail" >> "$results"
  printf '%-13s %-30s %-5s %s\n' "$1" "$2" "$status" "$detail" >&3
}

reserve_s=10  # kept for packing the archive and printing the table
left_s() { echo $(( budget_s - reserve_s - ($(date +%s) - start_s) )); }

# capped LIMIT CMD...: CMD under `timeout`, at most LIMIT seconds and never past the budget.
# 124: timed out; 125: no time was left to start it.
# Runs in the background and waits, so a signal to the script is handled at once (bash runs traps
# only between foreground commands) and finish() can stop the step.
child=""
capped() {
  local want=$1 left status; shift
  left=$(left_s)
  (( left >= 5 )) || return 125
  timeout --kill-after=5 "$(( want < left ? want : left ))" "$@" < /dev/null &
  child=$!
  wait "$child"
  status=$?
  child=""
  return $status
}
# why_failed STATUS LOG: a one-line reason for a failed step.
why_failed() {
  case $1 in
    124|137) echo "timed out (budget ${budget_s} s; see $(basename "$2"))" ;;
    125) echo "out of time before it started" ;;
    *) echo "exit $1: $(grep -v '^\s*$' "$2" 2>/dev/null | tail -1)" ;;
  esac
}

print_table() { python3 "$parse" table "$results"; }

killed=""
on_signal() { killed=$1; exit 1; }
trap 'on_signal INT' INT
trap 'on_signal TERM' TERM
trap 'on_signal HUP' HUP
finish() {
  trap - EXIT INT TERM HUP
  exec 1>&3 2>&4
  local code=0
  [[ -n $child ]] && kill -TERM "$child" 2> /dev/null && wait "$child" 2> /dev/null
  [[ -n ${power_pid:-} ]] && kill "$power_pid" 2> /dev/null
  [[ -n $killed ]] && row total "run" FAIL "killed by SIG$killed after $(( $(date +%s) - start_s )) s: rows after this one never ran"
  row total time info "$(( $(date +%s) - start_s )) s of ${budget_s} s"
  print_table > "$out/table.txt"
  # Logs, JSON and the traces that are small enough, beside results.tsv.
  (cd "$out" && find . -maxdepth 1 -type f ! -name gpu-check.tar.gz -size -4096k -printf '%P\n' \
     | tar -czf gpu-check.tar.gz -T - 2> /dev/null)
  echo
  cat "$out/table.txt"
  if grep -qP '\t(FAIL|MISSING)\t' "$results"; then
    code=1
  elif [[ $gpu_listed == 0 ]]; then
    log "no GPU: nothing tested (nvidia-smi lists no GPU; the rows above needed none)"
    code=3
  fi
  log "results: $results, archive: $out/gpu-check.tar.gz"
  exit $code
}
trap finish EXIT

# --- Setup -------------------------------------------------------------------------------------
python_dirs() { python3 "$parse" nvidia-lib-dirs 2> /dev/null; }

lib_dirs=()
find_cuda_libs() {
  local candidates=() d lib found
  # GPU_CHECK_LIB_DIRS (colon-separated) first: libraries in a place of the machine's own.
  IFS=: read -r -a candidates <<< "${GPU_CHECK_LIB_DIRS:-}"
  for d in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib \
           /usr/local/cuda/extras/CUPTI/lib64 /usr/local/cuda-*/lib64 \
           /usr/local/cuda-*/extras/CUPTI/lib64 /usr/lib/x86_64-linux-gnu; do
    [[ -d $d ]] && candidates+=("$d")
  done
  while IFS= read -r d; do candidates+=("$d"); done < <(python_dirs)
  for lib in libcublas.so.13 libcublasLt.so.13 libcupti.so.13 libnccl.so.2; do
    found=""
    for d in "${candidates[@]}"; do
      if [[ -e $d/$lib ]]; then found=$d; break; fi
    done
    if [[ -n $found ]]; then
      [[ " ${lib_dirs[*]-} " == *" $found "* ]] || lib_dirs+=("$found")
    else
      row setup "$lib" MISSING "not under /usr/local/cuda* nor in Python's nvidia/* packages"
    fi
  done
  local joined
  joined=$(IFS=:; echo "${lib_dirs[*]-}")
  export LD_LIBRARY_PATH="${joined}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  [[ -n $joined ]] && row setup "CUDA libraries" info "$joined"
  for d in "${lib_dirs[@]-}"; do  # NCCL headers for --build from the Python package
    if [[ -e $d/libnccl.so.2 && -e $d/../include/nccl.h ]]; then
      NCCL_HOME=$(cd "$d/.." && pwd); export NCCL_HOME
    fi
  done
}

# The catalog entry of the board nvidia-smi names (the GEMM rows set their rates beside its
# model): empty for a board the catalog does not describe.
entry="" board=""
board_entry() {
  case $1 in
    *H100*HBM3*|*"H100 SXM"*) echo h100-sxm ;;
    *H200*NVL*) ;;  # a 600 W PCIe card: not the SXM part the entry describes
    *H200*) echo h200-sxm ;;
    *A100-SXM4-80GB*|*"A100 80GB"*SXM*) echo a100-80gb ;;
    "NVIDIA B200"|"NVIDIA B200 "*) echo b200-sxm ;;  # not a GB200: another node and peak
  esac
}

describe_gpu() {
  local gpu
  if [[ $gpu_listed == 1 ]]; then
    gpu=$(timeout 10 nvidia-smi --query-gpu=name,memory.total,driver_version,power.limit,power.default_limit --format=csv,noheader 2>/dev/null | head -1)
    board=${gpu%%,*}
    entry=$(board_entry "$board")
    row setup gpu info "${gpu:-nvidia-smi -L lists a GPU, --query-gpu gave nothing}; catalog entry: ${entry:-none for '$board'}"
  else
    row setup gpu SKIP "nvidia-smi $(command -v nvidia-smi > /dev/null && echo lists no GPU || echo not found)"
  fi
  row setup date info "$(date -u '+%Y-%m-%d %H:%M UTC') on ${HOSTNAME:-$(uname -n)}"
}

bin=""
build_here() {
  command -v cmake > /dev/null || { row build cmake FAIL "cmake not found (use a bundle: --prebuilt)"; return 1; }
  local common=(-S "$root" -B "$build_dir" -DMESHSCOPE_GUI=OFF -DMESHSCOPE_CUDA=ON
                -DMESHSCOPE_MPI=OFF -DMESHSCOPE_BENCH=OFF -DCMAKE_BUILD_TYPE=Release) tests=ON status
  if ! capped 120 cmake "${common[@]}" -DMESHSCOPE_TESTS=ON > "$out/configure.log" 2>&1; then
    tests=OFF  # most likely no GoogleTest here: build the tools without the suite
    if ! capped 120 cmake "${common[@]}" -DMESHSCOPE_TESTS=OFF > "$out/configure.log" 2>&1; then
      row build configure FAIL "$(grep -m1 -i 'error' "$out/configure.log")"
      return 1
    fi
  fi
  local targets=(meshscope meshscope-kernel-check meshscope_gpu_module)
  [[ $tests == ON ]] && targets+=(kernels_cuda_tests profiler_cuda_tests)
  local t0; t0=$(date +%s)
  capped $(( $(left_s) - 120 )) cmake --build "$build_dir" -j "$(nproc)" --target "${targets[@]}" \
    > "$out/build.log" 2>&1
  status=$?
  if [[ $status != 0 ]]; then row build compile FAIL "$(why_failed $status "$out/build.log")"; return 1; fi
  row build compile ok "$(( $(date +%s) - t0 )) s, tests $tests, $build_dir"
  bin=$build_dir
}

versions() {
  local status
  capped 20 "$bin/meshscope-kernel-check" --versions > "$out/versions.log" 2>&1
  status=$?
  if ! grep -q '^version' "$out/versions.log"; then
    row setup versions FAIL "$(why_failed $status "$out/versions.log")"
    return
  fi
  local lib version detail
  while IFS=$'\t' read -r _ lib version detail; do
    if [[ $version == "?" ]]; then row version "$lib" SKIP "$detail"
    else row version "$lib" info "$version ($detail)"; fi
  done < <(grep '^version' "$out/versions.log")
}

# --- Checks ------------------------------------------------------------------------------------
json_field() {  # json_field FILE PYTHON-EXPRESSION-ON-d
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1" 2>/dev/null
}

kernel_checks() {
  local log_file="$out/kernel-check.log" status summary
  capped 90 "$bin/meshscope-kernel-check" > "$log_file" 2>&1
  status=$?
  case $status in
    0|1)
      summary=$(python3 "$parse" kernel-summary "$log_file")
      if [[ $status == 0 && $summary != 0/0* ]]; then row kernels "CUDA ops vs CPU" ok "$summary"
      else row kernels "CUDA ops vs CPU" FAIL "$summary"; fi ;;
    2) row kernels "CUDA ops vs CPU" SKIP "$(head -1 "$log_file")" ;;
    *) row kernels "CUDA ops vs CPU" FAIL "$(why_failed $status "$log_file")" ;;
  esac
}

# One measurement of a gemm row (gemm_measure NAME WHAT LIMIT OUT LOG CMD...): CMD, capped at
# LIMIT seconds, writes OUT and adds its stderr to LOG; 0 when it measured, else the row printed
# (SKIP where the tool found no device, FAIL otherwise, its reason after WHAT) and 1.
gemm_measure() {
  local name=$1 what=$2 limit=$3 out_file=$4 log_file=$5 status
  shift 5
  capped "$limit" "$@" > "$out_file" 2>> "$log_file"
  status=$?
  case $status in
    0) return 0 ;;
    2) row gemm "$name" SKIP "$(head -1 "$out_file")" ;;
    *) row gemm "$name" FAIL "$what$(why_failed $status "$log_file")" ;;
  esac
  return 1
}

# A GEMM row needs the board's catalog entry to set its rates beside (gemm_entry NAME: 0 when
# there is one, else the row FAIL and 1).
gemm_entry() {
  [[ -n $entry || $gpu_listed == 0 ]] && return 0  # without a GPU the measurement says SKIP
  row gemm "$1" FAIL "no catalog entry for this GPU ($board): h100-sxm, h200-sxm, b200-sxm and a100-80gb are described"
  return 1
}

# The board's SM clock, power draw, power limit, default limit and temperature every 0.5 s into
# FILE (read only: nothing is set), from now until stop_power_log; what docs/ACCURACY.md item 52's
# rule reads of the hold.
power_pid=""
start_power_log() {
  echo "# unix_s,sm_mhz,power_w,power_limit_w,power_default_limit_w,temperature_c" > "$1"
  ( while :; do
      printf '%s,%s\n' "$(date +%s.%N)" "$(timeout 5 nvidia-smi --query-gpu=clocks.sm,power.draw,power.limit,power.default_limit,temperature.gpu --format=csv,noheader,nounits 2>/dev/null | head -1 | tr -d ' ')"
      sleep 0.5
    done >> "$1" ) &
  power_pid=$!
}
stop_power_log() { [[ -n $power_pid ]] && kill "$power_pid" 2>/dev/null; wait "$power_pid" 2>/dev/null; power_pid=""; }

# The GEMM rates meshscope measures itself: what the catalog's gemm_max, k_half and sustained
# rest on, measured elsewhere until a run of this row is recorded (docs/ACCURACY.md items 6 and
# 52, issue 12): OpenXLA's 87 shapes, then 8192^3's burst and its rate held 20 s.
gemm_rates_check() {
  local shapes="$root/tests/fixtures/xla/h100_bf16_matmul.csv" raw="$out/gemm-rates.out"
  local log_file="$out/gemm-rates.log" verdict
  local name="rates (87 shapes, 8192^3 20 s)"
  gemm_entry "$name" || return
  : > "$log_file"
  [[ $gpu_listed == 1 ]] && start_power_log "$out/gemm-power.csv"
  gemm_measure "$name" "" 90 "$raw" "$log_file" \
    "$bin/meshscope-kernel-check" --gemm-rates "$shapes" --sustained 20
  local measured=$?
  stop_power_log
  [[ $measured == 0 ]] || return
  grep -E '^(b,|[0-9])' "$raw" > "$out/gemm-rates.csv"
  if ! python3 "$parse" held-csv "$raw" > "$out/held.csv" 2>> "$log_file"; then
    row gemm "$name" FAIL "the held rate: $(tail -1 "$log_file")"
    return
  fi
  local check=("$bin/meshscope" calibrate --gemm-rates "$out/gemm-rates.csv" --hardware "$entry"
               --held-rates "$out/held.csv")
  if ! capped 60 "${check[@]}" --json > "$out/gemm-check.json" 2>> "$log_file"; then
    row gemm "$name" FAIL "calibrate --gemm-rates: $(tail -1 "$log_file")"
    return
  fi
  # The entry as this board measured it, for predict; what calibrate refuses to write (a held rate
  # above the fit's burst) is said in the row, which keeps its measurement.
  local written="; $entry-measured.json written"
  capped 30 "${check[@]}" --write-hardware "$out/$entry-measured.json" > /dev/null 2>> "$log_file" \
    || written="; $entry-measured.json not written: $(tail -1 "$log_file")"
  verdict=$(python3 "$parse" gemm-summary "$out/gemm-check.json" "$raw" "$out/gemm-power.csv" 2>&1) \
    || { row gemm "$name" FAIL "$verdict"; return; }
  row gemm "$name" "${verdict%%|*}" "${verdict#*|}$written"
}

# The development rows' own GEMMs (scripts/dev_gemm_shapes.csv: each layer's twelve, forward and
# backward, of the H100 Megatron-core rows) measured and set beside the GEMM model with the fit
# of row 2b's table (`calibrate --compare`): whether the model is as right on GPT-3's shapes as on
# the others', which docs/ACCURACY.md's rule reads (issue 12).
dev_gemm_check() {
  local shapes="$root/scripts/dev_gemm_shapes.csv" log_file="$out/dev-gemm.log" verdict
  local name="development rows' GEMMs (84)"
  gemm_entry "$name" || return
  if [[ ! -s $out/gemm-rates.csv ]]; then
    row gemm "$name" SKIP "needs the rates of row 2b for its fit"
    return
  fi
  : > "$log_file"
  gemm_measure "$name" "" 60 "$out/dev-gemm-rates.csv" "$log_file" \
    "$bin/meshscope-kernel-check" --gemm-rates "$shapes" || return
  if ! capped 60 "$bin/meshscope" calibrate --gemm-rates "$out/gemm-rates.csv" \
      --hardware "$entry" --compare "$out/dev-gemm-rates.csv" --json \
      > "$out/dev-gemm-check.json" 2>> "$log_file"; then
    row gemm "$name" FAIL "calibrate --compare: $(tail -1 "$log_file")"
    return
  fi
  verdict=$(python3 "$parse" dev-gemm-summary "$out/dev-gemm-check.json" "$shapes" 2>&1) \
    || { row gemm "$name" FAIL "$verdict"; return; }
  # The weight gradients once more, added into an fp32 C as Megatron's gradient_accumulation_fusion
  # runs them (docs/ACCURACY.md, Appendix B: whether that epilogue overlaps the main loop), set
  # beside the same GEMMs into bf16 above.
  local wgrad_shapes="$out/dev-wgrad-shapes.csv" wgrad status
  grep -v '^#' "$shapes" | awk -F, 'NR == 1 || $6 ~ /\.wgrad$/' > "$wgrad_shapes"
  capped 60 "$bin/meshscope-kernel-check" --gemm-rates "$wgrad_shapes" --accumulate-fp32 \
    > "$out/dev-wgrad-fp32-rates.csv" 2>> "$log_file"
  status=$?
  if [[ $status != 0 ]]; then
    row gemm "$name" FAIL "${verdict#*|}; weight gradients into fp32: $(why_failed $status "$log_file")"
    return
  fi
  wgrad=$(python3 "$parse" wgrad-fp32 "$shapes" "$out/dev-gemm-rates.csv" \
          "$out/dev-wgrad-fp32-rates.csv" 2>&1) || { row gemm "$name" FAIL "${verdict#*|}; $wgrad"; return; }
  row gemm "$name" "${verdict%%|*}" "${verdict#*|}; $wgrad"
}

# FP8 GEMM rates through cuBLASLt, the call Transformer Engine's FP8 linears make, at the shapes of
# TileLang's benchmark the catalog's FP8 figures were fitted to (tests/fixtures/tilelang): whether
# those figures, from another library on another board, hold for cuBLAS on this one, which
# docs/ACCURACY.md item 51's rule reads (issue 12).
fp8_gemm_check() {
  local shapes="$root/tests/fixtures/tilelang/h800_fp8_matmul.csv" log_file="$out/fp8-gemm.log"
  local name="FP8 rates (7 shapes)" verdict
  gemm_entry "$name" || return
  if [[ $entry == a100-80gb ]]; then row gemm "$name" info "the A100 has no FP8 tensor cores"; return; fi
  : > "$log_file"
  gemm_measure "$name" "" 45 "$out/fp8-gemm-rates.csv" "$log_file" \
    "$bin/meshscope-kernel-check" --gemm-rates "$shapes" --fp8 || return
  # The entry with its FP8 ceiling scaled by those rates, for predict (as row 2b's for bf16).
  if ! capped 30 "$bin/meshscope" calibrate --gemm-rates "$out/fp8-gemm-rates.csv" --fp8 \
      --hardware "$entry" --json --write-hardware "$out/$entry-fp8-measured.json" \
      > "$out/fp8-gemm-check.json" 2>> "$log_file"; then
    row gemm "$name" FAIL "calibrate --fp8: $(tail -1 "$log_file")"
    return
  fi
  verdict=$(python3 "$parse" fp8-gemm-summary "$out/fp8-gemm-rates.csv" "$shapes" \
            "$root/sim/cost/catalog/$entry.json" 2>&1) || { row gemm "$name" FAIL "$verdict"; return; }
  # The rates above accumulate fast, as TE's forward GEMM; its dgrad and wgrad GEMMs promote
  # partial sums (split accumulation). The same shapes that way, recorded beside them.
  local split status
  capped 45 "$bin/meshscope-kernel-check" --gemm-rates "$shapes" --fp8 --split-accumulation \
    > "$out/fp8-gemm-rates-split.csv" 2>> "$log_file"
  status=$?
  if [[ $status != 0 ]]; then
    row gemm "$name" FAIL "${verdict#*|}; split accumulation: $(why_failed $status "$log_file")"
    return
  fi
  split=$(python3 "$parse" fp8-split "$out/fp8-gemm-rates.csv" "$out/fp8-gemm-rates-split.csv" 2>&1) \
    || { row gemm "$name" FAIL "${verdict#*|}; $split"; return; }
  row gemm "$name" "${verdict%%|*}" "${verdict#*|}; $split"
}

# Transformer Engine's SM margin on the NeMo rows' pipelined reduce-scatter GEMMs
# (kernels/cuda/sm_margin.h, scripts/sm_margin_cases.csv): each GEMM whole and in TE's chunks, with
# and without the SM count target, alone and beside a kernel holding the communication's SMs;
# under CUDA_DEVICE_MAX_CONNECTIONS 1 (what Megatron-based launchers set) and 8 (CUDA's default).
# What docs/ACCURACY.md's rule for pricing `set_sm_margin` reads (issue 12).
sm_margin_check() {
  local cases="$root/scripts/sm_margin_cases.csv" log_file="$out/sm-margin.log" conn verdict
  local name="SM margin (10 GEMMs)"
  for conn in 1 8; do
    gemm_measure "$name" "connections $conn: " 60 "$out/sm-margin-conn$conn.csv" "$log_file" \
      env CUDA_DEVICE_MAX_CONNECTIONS=$conn "$bin/meshscope-kernel-check" --sm-margin "$cases" \
      || return
  done
  verdict=$(python3 "$parse" sm-margin-summary "$out/sm-margin-conn1.csv" \
            "$out/sm-margin-conn8.csv" 2>&1) || { row gemm "$name" FAIL "$verdict"; return; }
  row gemm "$name" "${verdict%%|*}" "${verdict#*|}"
}

# Closed-form bubble fraction of a family (equal stage costs).
closed_form() { python3 "$parse" closed-form "$@"; }

# What a CUPTI trace's metadata says the capture saw: "ok|detail" or "FAIL|why".
cupti_verdict() { python3 "$parse" cupti-verdict "$1"; }

# steady_period TRACE: median period between step starts from the second step on, in ms (the
# first step loads modules, sizes memory pools and picks cuBLAS algorithms).
steady_period() { python3 "$parse" steady-period "$1"; }

# Steady-state bubble fraction of a trace through `meshscope analyze`, first step dropped.
steady_bubble() {
  local trace=$1 steady="${1%.json}.steady.json"
  python3 "$parse" drop-first-step "$trace" "$steady" || { echo "?"; return; }
  capped 30 "$bin/meshscope" analyze "$steady" --json > "$steady.analysis" 2>/dev/null || { echo "?"; return; }
  json_field "$steady.analysis" "'%.3f (step %.2f ms)' % (d['overall']['bubble_fraction'], d['step_time_ns'] / 1e6)"
}

# The families on 4 virtual devices: label, family, mesh flags, microbatches, virtual stages.
families=(
  "1f1b|1f1b|--pp 4|8|1"
  "gpipe|gpipe|--pp 4|8|1"
  "interleaved|interleaved|--pp 4|8|2"
  "zb-h1|zb-h1|--pp 4|8|1"
  "naive|naive|--pp 4|4|1"
  "tp|tp|--tp 4|2|1"
  "dp|dp|--dp 4|2|1"
)
small_model=(--model mlp --layers 8 --hidden 128 --batch 64)
large_model=(--model mlp --layers 8 --hidden 1024 --batch 2048)
[[ $backend == cpu ]] && large_model=("${small_model[@]}")

# run_json LIMIT JSON ARGS...: `meshscope run --json ARGS` under the budget; stderr beside it.
run_json() {
  local limit=$1 json=$2; shift 2
  capped "$limit" "$bin/meshscope" run --json "$@" > "$json" 2> "$json.err"
}

schedule_check() {
  local label=$1 fam=$2 mesh=$3 m=$4 v=$5 json trace status
  json="$out/$label.check.json"
  trace="$out/$label.trace.json"
  # shellcheck disable=SC2086  # mesh holds two words on purpose
  run_json 60 "$json" --backend "$backend" --schedule "$fam" $mesh -m "$m" -v "$v" --steps 3 \
    --tracer "$capture" "${small_model[@]}" --out "$trace"
  status=$?
  if [[ $status != 0 ]]; then
    local why; why=$(why_failed $status "$json.err")
    if [[ $why == *"no CUDA device"* ]]; then row schedule "$label" SKIP "$why"
    else row schedule "$label" FAIL "$why"; fi
    return 1
  fi
  local err equal verdict="ok|host tracer (plumbing)" desc
  err=$(json_field "$json" "'%.1e' % d['max_relative_error']")
  equal=$(json_field "$json" "d['equal_to_one_device']")
  desc=$(json_field "$json" "d['backend']")
  [[ $capture == cupti ]] && verdict=$(cupti_verdict "$trace")
  local status_word=${verdict%%|*}
  [[ $equal == True ]] || status_word=FAIL
  row schedule "$label" "$status_word" "vs 1 device rel err ${err:-?} (equal: ${equal:-?}); ${verdict#*|}"
  if [[ $label == 1f1b ]]; then
    if [[ $desc == *"green contexts x"* ]]; then row setup "green contexts" info "$desc"
    else row setup "green contexts" SKIP "${desc:-no description}"; fi
  fi
  # Timing: a larger model so kernels, not launches, fill the step (no CPU reference: too slow).
  [[ $(left_s) -gt 120 ]] || { row bubble "$label" info "not measured: kept the time for later rows"; return 0; }
  json="$out/$label.timing.json"
  trace="$out/$label.timing.trace.json"
  # shellcheck disable=SC2086
  if run_json 60 "$json" --backend "$backend" --schedule "$fam" $mesh -m "$m" -v "$v" --steps 4 \
       --tracer "$capture" --no-check "${large_model[@]}" --out "$trace"; then
    local p=4; [[ $fam == tp || $fam == dp ]] && p=1
    row bubble "$label" info "measured $(steady_bubble "$trace") vs closed form $(closed_form $p "$m" "$v" "$fam")"
  else
    row bubble "$label" FAIL "$(why_failed $? "$json.err")"
  fi
}

cuda_backend_check() {
  local json="$out/cuda.dp1.json" status
  [[ $backend == cpu ]] && { row "cuda backend" "dp1 (NCCL)" info "not run: cpu plumbing"; return; }
  run_json 60 "$json" --backend cuda --schedule dp --dp 1 -m 2 --steps 2 --tracer cupti \
    "${small_model[@]}" --out "$out/cuda.dp1.trace.json"
  status=$?
  if [[ $status != 0 ]]; then
    local why; why=$(why_failed $status "$json.err")
    row "cuda backend" "dp1 (NCCL)" "$([[ $why == *"no CUDA device"* ]] && echo SKIP || echo FAIL)" "$why"
    return
  fi
  local verdict; verdict=$(cupti_verdict "$out/cuda.dp1.trace.json")
  [[ $(json_field "$json" "d['equal_to_one_device']") == True ]] || verdict="FAIL|not equal to one device; ${verdict#*|}"
  row "cuda backend" "dp1 (NCCL)" "${verdict%%|*}" "$(json_field "$json" "d['backend']"); ${verdict#*|}"
}

# CUPTI overhead: 5 pairs of runs, host-clock tracer and CUPTI, in alternating order (host first
# in odd pairs, CUPTI first in even ones) so drift over the lease cancels; each run's steady
# period from its steps after the first.
overhead_check() {
  local pair order which tracer json trace period status host=() cupti=()
  local name="1f1b pp4 (5 pairs)"
  for pair in 1 2 3 4 5; do
    order=(base probe); (( pair % 2 == 0 )) && order=(probe base)
    for which in "${order[@]}"; do
      tracer=host; [[ $which == probe ]] && tracer=$capture
      json="$out/overhead.$pair.$which.json"
      trace="$out/overhead.$pair.$which.trace.json"
      run_json 45 "$json" --backend "$backend" --schedule 1f1b --pp 4 -m 8 --steps 5 \
        --tracer "$tracer" --no-check "${large_model[@]}" --out "$trace"
      status=$?
      if [[ $status != 0 ]]; then
        local why; why=$(why_failed $status "$json.err")
        row overhead "$name" "$([[ $why == *"no CUDA device"* ]] && echo SKIP || echo FAIL)" "pair $pair, $tracer: $why"
        return
      fi
      if ! period=$(steady_period "$trace"); then
        row overhead "$name" FAIL "pair $pair, $tracer: no step periods in $(basename "$trace")"
        return
      fi
      if [[ $which == base ]]; then host+=("$period"); else cupti+=("$period"); fi
    done
  done
  local verdict
  verdict=$(python3 "$parse" overhead "${host[*]}" "${cupti[*]}" "$capture")
  local status_word=${verdict%%|*}
  [[ $backend == cpu ]] && status_word=info  # plumbing: host against host, no verdict to give
  row overhead "$name" "$status_word" "${verdict#*|}"
}

gtests() {
  local t name status summary skipped reasons board_only found=0 filter=()
  # With a GPU, leave out the tests of the no-device path (they skip where a device is present),
  # so any test still skipped is one that should have run.
  [[ $gpu_listed == 1 ]] && filter=("--gtest_filter=-*NoDevice*:*FallsBackToCpu*")
  for t in "$bin"/cuda_*_test "$bin"/*cuda_tests "$bin"/tests/*cuda_tests; do
    [[ -x $t ]] || continue
    found=1
    name=$(basename "$t")
    capped 120 "$t" --gtest_brief=1 "${filter[@]}" > "$out/$name.log" 2>&1
    status=$?
    summary=$(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/$name.log" | sed 's/\[ *//; s/ *\]//' | tr '\n' ' ')
    # A skip for what the board lacks (no catalog entry to compare with, no FP8 peak: an A100) is
    # right on that board; any other skip with a GPU listed is a test that should have run.
    skipped=$(grep -A1 -E ': Skipped$' "$out/$name.log" | grep -vE ': Skipped$|^--$' | sort -u)
    reasons=$(paste -sd ';' - <<< "$skipped")
    board_only=0
    if [[ -n $skipped ]] && ! grep -qvE ': no catalog entry$| has no FP8 peak$' <<< "$skipped"; then
      board_only=1
    fi
    if [[ $status != 0 ]]; then row gtest "$name" FAIL "${summary:-$(why_failed $status "$out/$name.log")}"
    elif [[ $board_only == 1 ]]; then row gtest "$name" ok "$summary(skipped for this board: $reasons)"
    elif grep -q '^\[  SKIPPED \]' "$out/$name.log"; then row gtest "$name" SKIP "$summary${reasons:+($reasons)}"
    else row gtest "$name" ok "$summary"; fi
  done
  [[ $found == 1 ]] || row gtest "cuda tests" SKIP "none in $bin (the bundle was built without GoogleTest)"
}

sanitizer_check() {
  local sanitizer status f
  sanitizer=$(command -v compute-sanitizer)
  if [[ -z $sanitizer ]]; then
    for f in /usr/local/cuda*/bin/compute-sanitizer; do [[ -x $f ]] && { sanitizer=$f; break; }; done
  fi
  [[ -n $sanitizer ]] || { row sanitizer memcheck info "not run: compute-sanitizer not found (optional)"; return; }
  [[ $(left_s) -gt 40 ]] || { row sanitizer memcheck info "not run: $(left_s) s left (optional)"; return; }
  capped 240 "$sanitizer" --tool memcheck --error-exitcode 9 "$bin/meshscope-kernel-check" \
    > "$out/memcheck.log" 2>&1
  status=$?
  case $status in
    0) row sanitizer memcheck ok "$(grep -m1 'ERROR SUMMARY' "$out/memcheck.log")" ;;
    124|137|125) row sanitizer memcheck info "not finished in the time left (optional)" ;;
    # Some GPU machines refuse the tool itself ("Device not supported", then
    # error 999): the sanitizer did not run, which says nothing of the code.
    *) if grep -qiE 'device not supported|error 999' "$out/memcheck.log" && \
          ! grep -q 'ERROR SUMMARY: [1-9]' "$out/memcheck.log"; then
         row sanitizer memcheck info "not run: compute-sanitizer refused this device ($(grep -m1 -iE 'not supported|999' "$out/memcheck.log"))"
       else
         row sanitizer memcheck FAIL "$(grep -m1 'ERROR SUMMARY' "$out/memcheck.log" || why_failed $status "$out/memcheck.log")"
       fi ;;
  esac
}

# --- Main --------------------------------------------------------------------------------------
# Up to 32 hardware queues, so the 8 streams of 4 virtual devices never share one (the default is
# 8; profiler/runtime/cuda/virtual_backend.cpp warns when streams outnumber them).
export CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-32}
# A bundle holds binaries only: the hardware catalog and framework profiles (`calibrate
# --hardware`, the GEMM tests) and the fixtures and configs the GPU tests read come from the
# checkout this script is in, wherever the binaries were built.
export MESHSCOPE_CATALOG=${MESHSCOPE_CATALOG:-$root/sim/cost/catalog}
export MESHSCOPE_SOURCE_DIR=${MESHSCOPE_SOURCE_DIR:-$root}
describe_gpu
find_cuda_libs
if [[ $build == 1 ]]; then
  build_here || exit 1
else
  if [[ ! -x $prebuilt/meshscope || ! -x $prebuilt/meshscope-kernel-check ]]; then
    row build bundle FAIL "no bundle in $prebuilt (make one with --bundle on the build machine, or use --build)"
    exit 1
  fi
  bin=$(cd "$prebuilt" && pwd)
  [[ -d $bin/lib ]] && export LD_LIBRARY_PATH="$bin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  row build bundle info "$bin (commit $(cat "$bin/COMMIT" 2>/dev/null || echo unknown))"
fi
if ! capped 10 "$bin/meshscope" --version > "$out/start.log" 2>&1; then
  row build start FAIL "$bin/meshscope does not start: $(head -1 "$out/start.log")"
  exit 1
fi
versions
[[ -n $only ]] && row setup only info "--only ${only:1:${#only}-2}: the other groups of rows not run"
wanted kernels && kernel_checks
if wanted gemm; then
  if [[ $(left_s) -ge 60 ]]; then gemm_rates_check; else row gemm "rates (87 shapes, 8192^3 20 s)" SKIP "out of time"; fi
  if [[ $(left_s) -ge 60 ]]; then dev_gemm_check; else row gemm "development rows' GEMMs (84)" SKIP "out of time"; fi
  if [[ $(left_s) -ge 60 ]]; then sm_margin_check; else row gemm "SM margin (10 GEMMs)" SKIP "out of time"; fi
  if [[ $(left_s) -ge 45 ]]; then fp8_gemm_check; else row gemm "FP8 rates (7 shapes)" SKIP "out of time"; fi
fi
if wanted schedule; then
  for family in "${families[@]}"; do  # (`entry` is the board's catalog entry)
    IFS='|' read -r label fam mesh m v <<< "$family"
    if [[ $(left_s) -lt 60 ]]; then row schedule "$label" SKIP "out of time"; continue; fi
    schedule_check "$label" "$fam" "$mesh" "$m" "$v"
  done
  if [[ $(left_s) -ge 60 ]]; then cuda_backend_check; else row "cuda backend" "dp1 (NCCL)" SKIP "out of time"; fi
fi
if wanted overhead; then
  if [[ $(left_s) -ge 90 ]]; then overhead_check; else row overhead "1f1b pp4 (5 pairs)" SKIP "out of time ($(left_s) s left)"; fi
fi
wanted gtest && gtests
wanted sanitizer && sanitizer_check
