#!/usr/bin/env bash
# gpu_check_script_test.sh: scripts/gpu-check.sh's own logic, without a GPU. Fake bundles (shell
# scripts standing for meshscope, meshscope-kernel-check and a GoogleTest) and a fake nvidia-smi
# on PATH play the machines it must judge:
#   - no GPU listed: the rows that need one are SKIP and the exit is 3, "no GPU: nothing tested";
#   - a GPU listed that the binaries cannot use: those rows FAIL (never SKIP), exit 1;
#   - a GPU listed and CUPTI recording nothing: the schedule rows FAIL, exit 1;
#   - everything working: exit 0 with no FAIL or SKIP row;
#   - killed mid-run: the table is still printed, with the kill as a FAIL row;
#   - a hung step under a 30 s budget: cut at the budget, the script ends within it;
#   - an H100 set beside its own catalog entry, a board the catalog lacks failing the GEMM rows,
#     a GoogleTest skipped for what the board lacks (ok) or for anything else (FAIL),
#     and the held rate of a GEMM taken as docs/ACCURACY.md item 52 says.
# Usage: gpu_check_script_test.sh PATH/TO/gpu-check.sh
set -uo pipefail

script=${1:?usage: gpu_check_script_test.sh PATH/TO/gpu-check.sh}
work=$(mktemp -d /tmp/gpu-check-test.XXXXXX)
trap '[[ -n ${KEEP_WORK:-} ]] && echo "kept $work" || rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$(( failures + 1 )); }
pass() { echo "ok: $*"; }

# --- Fakes -------------------------------------------------------------------------------------
bundle=$work/bundle
mkdir -p "$bundle" "$work/gpu-bin" "$work/broken-smi-bin" "$work/libs"
for lib in libcublas.so.13 libcublasLt.so.13 libcupti.so.13 libnccl.so.2; do : > "$work/libs/$lib"; done
echo "0000000 fake" > "$bundle/COMMIT"

# FAKE_MODE: nodevice (the runtime sees no device), empty (runs, CUPTI records nothing),
# good, sleep (every run hangs).
cat > "$bundle/meshscope" <<'EOF'
#!/usr/bin/env bash
mode=${FAKE_MODE:-good}
[[ ${1:-} == --version ]] && { echo "meshscope 0.1.0"; exit 0; }
if [[ ${1:-} == analyze ]]; then
  echo '{"overall": {"bubble_fraction": 0.25}, "step_time_ns": 2000000}'
  exit 0
fi
if [[ ${1:-} == calibrate ]]; then  # calibrate --gemm-rates CSV --hardware ENTRY --json ...
  compare="" held="" hw="" write=""
  for ((i = 1; i < $#; i++)); do
    j=$((i + 1))
    case ${!i} in
      --compare) compare=${!j} ;; --held-rates) held=${!j} ;; --hardware) hw=${!j} ;;
      --write-hardware) write=${!j} ;;
    esac
  done
  if [[ -n $write ]]; then  # FAKE_REFUSE_WRITE: as calibrate refusing a held rate above the burst
    [[ -n ${FAKE_REFUSE_WRITE:-} && -n $held ]] && { echo "meshscope: error: held rates above the burst rate" >&2; exit 1; }
    echo '{}' > "$write"
    exit 0
  fi
  # As the real one: the catalog from MESHSCOPE_CATALOG, since a bundle carries none.
  [[ -f ${MESHSCOPE_CATALOG:-}/$hw.json ]] || { echo "meshscope: error: unknown hardware '$hw'" >&2; exit 1; }
  [[ $(head -1 "$3") == b,m,n,k,flops_per_s* ]] || { echo "meshscope: error: $3:1: bad header" >&2; exit 1; }
  echo "{\"shapes\": 2, \"hardware\": \"$hw\", \"rms\": 0.021, \"scale\": 1.05, \"fixed_s\": 5.5e-06,"
  echo ' "k_half": 128, "best_k_half": 144, "best_k_half_rms": 0.02,'
  printf ' "best_flops_per_s": 7.9e14, "best_shape": [1, 4096, 4096, 4096]'
  if [[ -n $held ]]; then  # the held rate over a burst model of 7.6e14, and 1.05 times it
    [[ $(sed -n 2p "$held") == 1,8192,8192,8192,* ]] || { echo "meshscope: error: $held: no held 8192^3" >&2; exit 1; }
    sed -n 2p "$held" | awk -F, '{printf ", \"held\": {\"sustained_vs_entry\": %.4f, \"sustained_vs_fit\": %.4f, \"entry_sustained\": 0.848, \"rows\": [{\"fitted_burst_flops_per_s\": 7.98e14}]}", $5 / 7.6e14, $5 / 7.98e14}'
  fi
  if [[ -n $compare ]]; then  # each compared rate beside a model 10% slower than it
    printf ', "compare": {"rms": 0.1, "rows": ['
    tail -n +2 "$compare" | awk -F, '{printf "%s{\"shape\": [%s, %s, %s, %s], \"measured_flops_per_s\": %s, \"model_flops_per_s\": %s, \"model_over_measured\": 0.9}", (NR > 1 ? ", " : ""), $1, $2, $3, $4, $5, $5 * 0.9}'
    printf ']}'
  fi
  echo '}'
  exit 0
fi
out="" tracer=auto args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case ${args[i]} in --out) out=${args[i+1]} ;; --tracer) tracer=${args[i+1]} ;; esac
done
case $mode in
  nodevice) echo "meshscope: error: no CUDA device: cudaErrorNoDevice (no CUDA-capable device is detected)" >&2; exit 1 ;;
  sleep) sleep 100; exit 0 ;;
esac
ops=10; [[ $mode == empty ]] && ops=0
period=2000000; [[ $tracer == cupti ]] && period=2010000
python3 - "$out" "$ops" "$period" "$tracer" <<'PY'
import json, sys
out, ops, period, tracer = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
md = {"tracer": tracer}
if tracer == "cupti":
    md.update({k: str(v) for k, v in {
        "cupti_gpu_ops": ops, "cupti_ops_by_external_id": ops, "cupti_ops_by_nvtx": 0,
        "cupti_ops_unlabelled": 0, "cupti_dropped_records": 0, "cupti_untimed_records": 0}.items()})
begins = [0] + [10_000_000 + i * period for i in range(4)]  # step 0 slow, as on a GPU
steps = [{"begin_ns": b, "end_ns": b + period - 1000} for b in begins]
if out:
    json.dump({"meshscope": {"metadata": md, "steps": steps}, "traceEvents": []}, open(out, "w"))
print(json.dumps({"equal_to_one_device": True, "max_relative_error": 1e-7, "wall_s": 0.1,
                  "backend": "cuda-virtual (4 green contexts x 32 SMs of 132 on NVIDIA H200, 32 hardware queues)"}))
PY
EOF
cat > "$bundle/meshscope-kernel-check" <<'EOF'
#!/usr/bin/env bash
mode=${FAKE_MODE:-good}
if [[ ${1:-} == --versions ]]; then
  if [[ $mode == nodevice ]]; then printf 'version\tdriver\t?\tcudaErrorInsufficientDriver\n'; exit 1; fi
  printf 'version\tdriver\t13.0\tcudaDriverGetVersion\nversion\truntime\t13.0\tcudaRuntimeGetVersion\n'
  printf 'version\tcublas\t13.0.0\tcublasGetProperty\nversion\tcupti\t130001\tcuptiGetVersion\n'
  printf 'version\tnccl\t2.27.7\tncclGetVersion\n'
  exit 0
fi
case $mode in
  nodevice) echo "SKIP: no CUDA device: cudaErrorNoDevice (no CUDA-capable device is detected)"; exit 2 ;;
  sleep) sleep 100 ;;
esac
if [[ ${1:-} == --gemm-rates && $2 == */dev_gemm_shapes.csv ]]; then  # each of its shapes
  echo 'b,m,n,k,flops_per_s,seconds'
  grep -v '^#' "$2" | tail -n +2 | awk -F, '{print $1 "," $2 "," $3 "," $4 ",6e14,1e-3"}'
  exit 0
fi
if [[ ${1:-} == --gemm-rates && $2 == */dev-wgrad-shapes.csv && ${3:-} == --accumulate-fp32 ]]; then
  echo 'b,m,n,k,flops_per_s,seconds'  # the weight gradients, 1.2 times as long into fp32
  tail -n +2 "$2" | awk -F, '{print $1 "," $2 "," $3 "," $4 ",5e14,1e-3"}'
  exit 0
fi
if [[ ${1:-} == --gemm-rates && ${3:-} == --fp8 ]]; then  # TileLang's shapes, each at 0.9 its rate
  scale=0.9; [[ ${4:-} == --split-accumulation ]] && scale=0.72  # and split at 0.8 of that
  echo 'b,m,n,k,flops_per_s,seconds'
  grep -v '^#' "$2" | tail -n +2 | awk -F, -v s=$scale '{printf "%s,%s,%s,%s,%.6e,1e-3\n", $1, $2, $3, $4, s * $5}'
  exit 0
fi
if [[ ${1:-} == --gemm-rates ]]; then  # ... --sustained 20: a burst of 7.6e14, held at 6.5e14
  printf 'b,m,n,k,flops_per_s,seconds\n1,4096,4096,4096,7.9e14,1.74e-4\n1,1024,1024,1024,2.4e14,9e-6\n'
  sleep 1.5  # the power log beside it takes a sample or two
  now=$(date +%s.%N)
  printf 'sustained shape\t1,8192,8192,8192\t0.5\nburst\t7.6e14\n'
  printf 'hold\t%s\t%s\n' "$(awk -v t="$now" 'BEGIN { printf "%.3f", t - 20 }')" "$now"
  for w in $(seq 0 39); do  # 7.0e14 at first, 6.5e14 from the 5th second on
    printf 'sustained\t%d\t%s\n' "$w" "$( (( w < 10 )) && echo 7.0e14 || echo 6.5e14)"
  done
  exit 0
fi
if [[ ${1:-} == --sm-margin ]]; then  # held_s tells the connections setting it ran under
  held=1.2e-4; [[ ${CUDA_DEVICE_MAX_CONNECTIONS:-} == 8 ]] && held=1.25e-4
  echo 'name,m,n,k,num_sm,num_splits,sms,whole_s,whole_target_s,split_s,split_target_s,held_s,held_target_s'
  echo "nemo-gpt3-175b.proj_fprop,2048,12288,3072,24,4,132,1.0e-4,1.2e-4,1.01e-4,1.03e-4,$held,1.19e-4"
  exit 0
fi
echo "ok   gemm                           fp32 NN 67x45x129 beta=0             rel_err 1.000e-07  tol 1.0e-05"
echo "ok   gemm                           tf32 NN 67x45x129 beta=0             rel_err 7.000e-04  tol 1.5e-03"
echo "2 checks, 0 failed (seed 1)"
EOF
cat > "$bundle/cuda_ops_test" <<'EOF'
#!/usr/bin/env bash
# As the real GPU tests: fixtures and configs from MESHSCOPE_SOURCE_DIR, the checkout run from.
[[ -f ${MESHSCOPE_SOURCE_DIR:-}/scripts/sm_margin_cases.csv ]] || { echo "[  FAILED  ] no source tree"; exit 1; }
# FAKE_SKIP: the reason a test skips with, printed as GoogleTest prints it.
if [[ -n ${FAKE_SKIP:-} ]]; then
  printf 'tests/kernels/cuda_gemm_rates_test.cpp:103: Skipped\n%s\n' "$FAKE_SKIP"
  echo "[==========] 3 tests from 1 test suite ran. (5 ms total)"
  echo "[  PASSED  ] 2 tests."
  echo "[  SKIPPED ] 1 test, listed below:"
  echo "[  SKIPPED ] CudaGemmRates.Fp8RatesAreWhatTheCatalogEntrySays"
  exit 0
fi
echo "[==========] 3 tests from 1 test suite ran. (5 ms total)"
echo "[  PASSED  ] 3 tests."
EOF
cat > "$work/gpu-bin/nvidia-smi" <<'EOF'
#!/usr/bin/env bash
# FAKE_GPU: the board's name (an H200 unless set); FAKE_POWER_W: its draw (690 of a 700 W limit).
name=${FAKE_GPU:-NVIDIA H200}
case "$*" in
  -L) echo "GPU 0: $name (UUID: GPU-00000000-0000-0000-0000-000000000000)" ;;
  *query-gpu=clocks.sm*) echo "1755, ${FAKE_POWER_W:-690.50}, 700.00, 700.00, 65" ;;
  *query-gpu*) echo "$name, 143771 MiB, 580.65.06, 700.00 W, 700.00 W" ;;
  *) echo "fake nvidia-smi" ;;
esac
EOF
cat > "$work/broken-smi-bin/nvidia-smi" <<'EOF'
#!/usr/bin/env bash
echo "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver." >&2
exit 9
EOF
chmod +x "$bundle"/* "$work/gpu-bin/nvidia-smi" "$work/broken-smi-bin/nvidia-smi"

# start_check NAME SMI_DIR MODE [ARGS...]: runs the script in the background (FAKE_* variables set
# before the call reach it); finish_check NAME waits for it and sets rc, log, tsv. The runs share
# nothing but the read-only bundle, and a whole run spends most of its 20 s starting Python, so the
# cases whose timing is not checked run at once, and those about one group of rows run only it
# (--only): the test took 205 s of the suite's 208 s wall time one case after another (2026-12-07,
# beside the rest of ctest -j2), 62 s so.
declare -A pid_of
start_check() {
  local name=$1 smi=$2 mode=$3; shift 3
  (
    PATH="$smi:$PATH" FAKE_MODE=$mode GPU_CHECK_LIB_DIRS=$work/libs \
      bash "$script" --prebuilt "$bundle" --out "$work/$name" "$@" > "$work/$name.log" 2>&1
    echo $? > "$work/$name.rc"
  ) &
  pid_of[$name]=$!
}
finish_check() {
  local name=$1
  wait "${pid_of[$name]}"
  log=$work/$name.log
  tsv=$work/$name/results.tsv
  rc=$(cat "$work/$name.rc" 2> /dev/null || echo "none")
}
run_check() { start_check "$@"; finish_check "$1"; }
status_of() { awk -F'\t' -v s="$1" -v c="$2" '$1 == s && $2 == c {print $3}' "$tsv" | head -1; }

start_check nogpu "$work/broken-smi-bin" nodevice
start_check unusable "$work/gpu-bin" nodevice
start_check empty "$work/gpu-bin" empty
start_check good "$work/gpu-bin" good
# The cases about one group of rows run only it (--only): the whole script costs 20 s of CPU.
FAKE_GPU="NVIDIA H100 80GB HBM3" FAKE_POWER_W=500.00 FAKE_REFUSE_WRITE=1 \
  start_check h100 "$work/gpu-bin" good --only gemm
FAKE_GPU="NVIDIA B200" start_check b200 "$work/gpu-bin" good --only kernels
FAKE_GPU="NVIDIA GB200" start_check gb200 "$work/gpu-bin" good --only kernels
FAKE_GPU="NVIDIA L4" start_check l4 "$work/gpu-bin" good --only gemm,gtest
FAKE_GPU="NVIDIA A100-SXM4-80GB" FAKE_SKIP="a100-80gb has no FP8 peak" \
  start_check a100 "$work/gpu-bin" good --only gtest
FAKE_SKIP="no CUDA device: cudaErrorNoDevice" start_check gtestskip "$work/gpu-bin" good --only gtest
start_check onlybad "$work/gpu-bin" good --only gemm,bogus

# --- No GPU listed: nothing may pass -------------------------------------------------------------
finish_check nogpu
if [[ $rc == 3 ]]; then pass "no GPU: exit 3"; else fail "no GPU: exit $rc, want 3"; fi
grep -q "no GPU: nothing tested" "$log" && pass "no GPU: says nothing was tested" \
  || fail "no GPU: no 'nothing tested' line"
[[ $(status_of kernels "CUDA ops vs CPU") == SKIP ]] && pass "no GPU: kernel row SKIP" \
  || fail "no GPU: kernel row is '$(status_of kernels "CUDA ops vs CPU")'"
grep -qP '\tFAIL\t' "$tsv" && fail "no GPU: a FAIL row where nothing could run"
[[ -s $work/nogpu/gpu-check.tar.gz ]] && pass "no GPU: archive written" || fail "no GPU: no archive"
if ! command -v nvidia-smi > /dev/null; then  # the plain machine, as it is: no nvidia-smi at all
  PATH="$PATH" FAKE_MODE=nodevice GPU_CHECK_LIB_DIRS=$work/libs \
    bash "$script" --prebuilt "$bundle" --out "$work/nosmi" > "$work/nosmi.log" 2>&1
  rc=$?
  [[ $rc == 3 ]] && pass "no nvidia-smi: exit 3" || fail "no nvidia-smi: exit $rc, want 3"
fi

# --- A GPU listed that the binaries cannot use ---------------------------------------------------
finish_check unusable
[[ $rc == 1 ]] && pass "unusable GPU: exit 1" || fail "unusable GPU: exit $rc, want 1"
grep -qP '\tSKIP\t' "$tsv" && fail "unusable GPU: a SKIP row: $(grep -P '\tSKIP\t' "$tsv" | head -1)"
for check in "kernels|CUDA ops vs CPU" "schedule|1f1b" "schedule|dp" "version|driver"; do
  IFS='|' read -r section name <<< "$check"
  if [[ $(status_of "$section" "$name") == FAIL ]]; then pass "unusable GPU: $section $name FAIL"
  else fail "unusable GPU: $section $name is '$(status_of "$section" "$name")', want FAIL"; fi
done
grep -q "did not run although nvidia-smi lists a GPU" "$tsv" && pass "unusable GPU: rows say why" \
  || fail "unusable GPU: no reason given"

# --- A GPU listed, CUPTI records nothing ---------------------------------------------------------
finish_check empty
[[ $rc == 1 ]] && pass "empty CUPTI: exit 1" || fail "empty CUPTI: exit $rc, want 1"
if [[ $(status_of schedule 1f1b) == FAIL ]] && grep -P '^schedule\t1f1b\t' "$tsv" | grep -q "CUPTI recorded nothing"; then
  pass "empty CUPTI: 1f1b FAIL, CUPTI recorded nothing"
else
  fail "empty CUPTI: 1f1b row: $(grep -P '^schedule\t1f1b\t' "$tsv")"
fi

# --- Everything works ----------------------------------------------------------------------------
finish_check good
[[ $rc == 0 ]] && pass "good: exit 0" || fail "good: exit $rc, want 0: $(grep -P '\t(FAIL|SKIP|MISSING)\t' "$tsv" | head -3)"
[[ $(status_of overhead "1f1b pp4 (5 pairs)") == ok ]] && pass "good: overhead row ok" \
  || fail "good: overhead row '$(status_of overhead "1f1b pp4 (5 pairs)")'"
grep -P '^overhead\t' "$tsv" | grep -q "overhead median +0.50%" && pass "good: overhead from steady periods" \
  || fail "good: overhead figure: $(grep -P '^overhead\t' "$tsv")"
grep -P '^gemm\t' "$tsv" | grep -qP '\tok\t2 shapes: the h200-sxm model within 2.10% rms .*8192x8192x8192 held 20 s: burst 760.0 \(5 calls after 1 s idle\), held 650.0 TFLOP/s \(from 10 s on\), sustained share 0.855 of the burst; over the h200-sxm model.s burst 0.855 \(the entry.s 0.848\), over it with the fit 0.815; the burst over the fit.s rate for it 0.952; last 10 s: 690 W of a 700 W limit \(default 700\), SM 1755 MHz, 65 C: at its power limit; item 52: h200-sxm.s share is recorded beside its catalog.s 0.848, not adopted; h200-sxm-measured.json written' \
  && pass "good: GEMM rates row, held over burst and the power at the hold" \
  || fail "good: GEMM rates row: $(grep -P '^gemm\t' "$tsv")"
[[ $(head -1 "$work/good/gemm-rates.csv") == b,m,n,k,flops_per_s,seconds && $(wc -l < "$work/good/gemm-rates.csv") == 3 ]] \
  && pass "good: GEMM rates CSV kept, the held lines apart" \
  || fail "good: gemm-rates.csv: $(head -4 "$work/good/gemm-rates.csv")"
[[ $(cat "$work/good/held.csv") == $'b,m,n,k,flops_per_s\n1,8192,8192,8192,6.500000e+14' ]] \
  && pass "good: held.csv for calibrate --held-rates" || fail "good: held.csv: $(cat "$work/good/held.csv")"
grep -q '^[0-9.]*,1755,690.50,700.00,700.00,65$' "$work/good/gemm-power.csv" \
  && pass "good: power sampled beside the hold" || fail "good: gemm-power.csv: $(head -3 "$work/good/gemm-power.csv")"
[[ -s $work/good/h200-sxm-measured.json ]] && pass "good: the measured entry written" \
  || fail "good: no h200-sxm-measured.json"
grep -P "^gemm\tdevelopment rows' GEMMs" "$tsv" | grep -qP '\tok\t.*gpt3-175b 1.111, llama31-8b 1.111, .* llama3-405b 1.111; weight gradients into fp32 over into bf16, a layer.s \(time\): gpt3-175b 1.200, .* llama3-405b 1.200; median 1.200$' \
  && pass "good: development rows' GEMMs row, one figure a row" \
  || fail "good: development rows' GEMMs row: $(grep -P "^gemm\tdevelopment" "$tsv")"
grep -P '^gemm\tFP8 rates' "$tsv" | grep -qP '\tok\tcuBLASLt e4m3 at 8192x8192, K 256/.*/16384: 512/.*/1387 TFLOP/s; median 0.900 of TileLang.s; .*fitted to it: gemm_fp8_max 0.759, fp8_k_half 464 .*; split accumulation \(TE.s dgrad and wgrad\): 410/.*/1110 TFLOP/s, median 0.800 of the fast rates \(0.800 to 0.800\)$' \
  && pass "good: FP8 rates row" || fail "good: FP8 rates row: $(grep -P '^gemm\tFP8' "$tsv")"
grep -P '^gemm\tSM margin' "$tsv" | grep -qP '\tok\t.*connections 1: gpt3-175b.proj 1.20/1.01/1.03/1.20/1.19 \(cap 1.22\); connections 8: gpt3-175b.proj 1.20/1.01/1.03/1.25/1.19' \
  && pass "good: SM margin row, both connection settings" \
  || fail "good: SM margin row: $(grep -P '^gemm\tSM margin' "$tsv")"
[[ $(status_of setup "green contexts") == info ]] && pass "good: green-context split reported" \
  || fail "good: no green-context row"
[[ $(status_of version cupti) == info ]] && pass "good: versions up front" || fail "good: no cupti version"
head -1 "$tsv" | grep -qP '^setup\t' && pass "good: setup first" || fail "good: first row $(head -1 "$tsv")"
grep -q "^section" "$log" && pass "good: table printed" || fail "good: no table"

# --- An H100 is set beside its own entry; a capped draw is said; an unknown board fails its GEMM rows
finish_check h100
grep -P '^setup\tgpu\t' "$tsv" | grep -q 'catalog entry: h100-sxm' && pass "h100: the board's entry named" \
  || fail "h100: gpu row: $(grep -P '^setup\tgpu' "$tsv")"
grep -P '^gemm\trates' "$tsv" | grep -qP '\tok\t2 shapes: the h100-sxm model .* 500 W of a 700 W limit .*not at an uncapped power limit; item 52: not adopted \(rule 1: a hold not at an uncapped power limit\); h100-sxm-measured.json not written: meshscope: error: held rates above the burst rate$' \
  && pass "h100: rates beside h100-sxm, a hold below its power limit and a file not written said" \
  || fail "h100: GEMM rates row: $(grep -P '^gemm\trates' "$tsv")"
grep -P '^gemm\tFP8' "$tsv" | grep -q 'the h100-sxm model' && pass "h100: FP8 rates beside h100-sxm" \
  || fail "h100: FP8 row: $(grep -P '^gemm\tFP8' "$tsv")"
finish_check b200
grep -P '^setup\tgpu\t' "$tsv" | grep -q 'catalog entry: b200-sxm' && pass "b200: the board's entry named" \
  || fail "b200: gpu row: $(grep -P '^setup\tgpu' "$tsv")"
finish_check gb200
grep -P '^setup\tgpu\t' "$tsv" | grep -q "catalog entry: none for 'NVIDIA GB200'" \
  && pass "gb200: not taken for a B200" || fail "gb200: gpu row: $(grep -P '^setup\tgpu' "$tsv")"
finish_check l4
[[ $rc == 1 && $(status_of gemm "rates (87 shapes, 8192^3 20 s)") == FAIL ]] \
  && grep -P '^gemm\trates' "$tsv" | grep -q "no catalog entry for this GPU (NVIDIA L4)" \
  && pass "unknown board: GEMM rows FAIL naming it" \
  || fail "unknown board: exit $rc, $(grep -P '^gemm\trates' "$tsv")"
# --only: the groups asked for and no others, said in a row; an unknown group is bad usage.
[[ $(status_of setup only) == info && -z $(grep -P '^(schedule|kernels|overhead)\t' "$tsv") \
   && -n $(grep -P '^gtest\t' "$tsv") ]] \
  && pass "--only gemm,gtest: those rows and the versions, no others" \
  || fail "--only gemm,gtest: $(cut -f1,2 "$tsv" | tr '\t\n' ': ')"
finish_check onlybad
[[ $rc == 2 ]] && grep -q "gpu-check: --only: unknown group 'bogus' (one of: kernels gemm" "$log" \
  && pass "--only with an unknown group: exit 2, naming it" || fail "--only bogus: exit $rc, $(cat "$log")"

# --- A GoogleTest that skips: right for what the board lacks, a failure otherwise -----------------
finish_check a100
grep -P '^gtest\tcuda_ops_test\t' "$tsv" | grep -qP '\tok\t.*skipped for this board: a100-80gb has no FP8 peak\)$' \
  && pass "a100: the FP8 test's skip is the board's, said" \
  || fail "a100: gtest row: $(grep -P '^gtest\t' "$tsv")"
finish_check gtestskip
[[ $rc == 1 && $(status_of gtest cuda_ops_test) == FAIL ]] \
  && grep -P '^gtest\t' "$tsv" | grep -q "no CUDA device: cudaErrorNoDevice" \
  && pass "a test skipped for another reason with a GPU listed: FAIL, with the reason" \
  || fail "gtest skipped with a GPU: exit $rc, $(grep -P '^gtest\t' "$tsv")"

# --- The held rate, as docs/ACCURACY.md item 52's rule takes it ------------------------------------
# hold_raw SECONDS LAST: a hold of SECONDS in 0.5 s windows at 6.5e14, its last 2 s at LAST.
hold_raw() {
  printf 'sustained shape\t1,8192,8192,8192\t0.5\nburst\t7.6e14\nhold\t1000\t%s\n' "$((1000 + $1))"
  local n=$(( $1 * 2 ))
  for ((w = 0; w < n; w++)); do
    printf 'sustained\t%d\t%s\n' "$w" "$( (( w >= n - 4 )) && echo "$2" || echo 6.5e14)"
  done
}
parse=$(dirname "$script")/gpu_check_parse.py
held_of() { hold_raw "$@" > "$work/hold.out"; python3 "$parse" held-csv "$work/hold.out" 2>&1 | tail -1; }
[[ $(held_of 20 6.45e14) == 1,8192,8192,8192,6.500000e+14 ]] && pass "held: the median from 10 s on" \
  || fail "held: $(held_of 20 6.45e14), want 6.5e14 (the last 2 s within 1%)"
[[ $(held_of 20 6.3e14) == 1,8192,8192,8192,6.300000e+14 ]] && pass "held: the last 2 s when still slowing" \
  || fail "held: $(held_of 20 6.3e14), want 6.3e14 (the last 2 s 3% lower)"
[[ $(held_of 8 6.5e14) == *"the hold lasted under 10 s: no held rate" ]] \
  && pass "held: a hold under 10 s gives none" || fail "held: a short hold: $(held_of 8 6.5e14)"

# Item 52's verdict on an H100 (gemm-summary of a calibrate check, a hold and its power samples).
verdict_of() {  # verdict_of FITTED_BURST POWER_W: the row's item 52 clause
  hold_raw 20 6.5e14 > "$work/hold.out"
  printf '{"shapes": 2, "hardware": "h100-sxm", "rms": 0.02, "scale": 1.05, "fixed_s": 5e-06, "k_half": 128, "best_k_half": 144, "best_k_half_rms": 0.02, "best_flops_per_s": 7.9e14, "best_shape": [1, 4096, 4096, 4096], "held": {"sustained_vs_entry": 0.85, "sustained_vs_fit": 0.81, "entry_sustained": 0.848, "rows": [{"fitted_burst_flops_per_s": %s}]}}\n' "$1" > "$work/check.json"
  printf '# unix_s,...\n1015,1755,%s,700.00,700.00,65\n1018,1755,%s,700.00,700.00,66\n' "$2" "$2" > "$work/power.csv"
  python3 "$parse" gemm-summary "$work/check.json" "$work/hold.out" "$work/power.csv" 2>&1 | grep -o 'item 52: .*'
}
[[ $(verdict_of 7.8e14 690.00) == "item 52: h100-sxm's sustained becomes 0.855 (rule 2)" ]] \
  && pass "item 52: an H100 at its limit, its burst at the boost clock: adopted" \
  || fail "item 52 on a good H100 hold: $(verdict_of 7.8e14 690.00)"
[[ $(verdict_of 8.2e14 690.00) == "item 52: not adopted (rule 1: a burst more than 5% below the fit's rate)" ]] \
  && pass "item 52: a burst below the boost clock: not adopted" \
  || fail "item 52 on a slow burst: $(verdict_of 8.2e14 690.00)"
[[ $(verdict_of 7.8e14 600.00) == "item 52: not adopted (rule 1: a hold not at an uncapped power limit)" ]] \
  && pass "item 52: a hold under 90% of the limit: not adopted" \
  || fail "item 52 on a low draw: $(verdict_of 7.8e14 600.00)"

# The CUPTI verdict of a trace: ops on no rank's stream (a device "GPU n (unattributed)", counted
# in the bubble) fail it, as dropped records do.
cupti_of() {  # cupti_of UNATTRIBUTED DROPPED
  printf '{"meshscope": {"metadata": {"cupti_gpu_ops": "120", "cupti_ops_by_external_id": "100", "cupti_ops_by_nvtx": "10", "cupti_ops_unlabelled": "10", "cupti_dropped_records": "%s", "cupti_untimed_records": "0", "cupti_unattributed_ops": "%s"}}}\n' "$2" "$1" > "$work/cupti.json"
  python3 "$parse" cupti-verdict "$work/cupti.json" | cut -d'|' -f1
}
[[ $(cupti_of 0 0) == ok ]] && pass "cupti verdict: every op on a rank's stream"   || fail "cupti verdict of a clean trace: $(cupti_of 0 0)"
[[ $(cupti_of 3 0) == FAIL ]] && pass "cupti verdict: ops on no rank's stream fail it"   || fail "cupti verdict with 3 unattributed ops: $(cupti_of 3 0)"
[[ $(cupti_of 0 2) == FAIL ]] && pass "cupti verdict: dropped records fail it"   || fail "cupti verdict with 2 dropped records: $(cupti_of 0 2)"

# --- Killed mid-run: the table still comes -------------------------------------------------------
PATH="$work/gpu-bin:$PATH" FAKE_MODE=sleep GPU_CHECK_LIB_DIRS=$work/libs \
  bash "$script" --prebuilt "$bundle" --out "$work/killed" > "$work/killed.log" 2>&1 &
pid=$!
for _ in $(seq 50); do grep -q "version" "$work/killed/results.tsv" 2> /dev/null && break; sleep 0.1; done
sleep 0.5
kill -TERM "$pid"
t0=$(date +%s)
wait "$pid"
rc=$?
[[ $rc == 1 ]] && pass "killed: exit 1" || fail "killed: exit $rc, want 1"
(( $(date +%s) - t0 <= 10 )) && pass "killed: ended at once" || fail "killed: took $(( $(date +%s) - t0 )) s to end"
grep -q "killed by SIGTERM" "$work/killed.log" && grep -q "^section" "$work/killed.log" \
  && pass "killed: table printed with the kill" || fail "killed: no table or no kill row"

# --- A hung step under a short budget ------------------------------------------------------------
t0=$(date +%s)
run_check budget "$work/gpu-bin" sleep --budget 30
took=$(( $(date +%s) - t0 ))
[[ $rc == 1 ]] && pass "budget: exit 1" || fail "budget: exit $rc, want 1"
(( took <= 40 )) && pass "budget: ended after $took s (budget 30 s)" || fail "budget: took $took s"
grep -q "timed out" "$tsv" && pass "budget: the hung step timed out" || fail "budget: no timed-out row"

echo "$failures failure(s)"
[[ $failures == 0 ]]
