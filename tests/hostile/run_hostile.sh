#!/usr/bin/env bash
# The hostile-input suite (docs/RELIABILITY.md): malformed traces, hostile schedules and arguments,
# hostile configs, hardware files and calibrations, special files and links as outputs, and signals
# during writes, against the built `meshscope`. Every invocation is classified: a crash (killed by a
# signal it did not ask for, a sanitizer report), a hang (still running after its time limit), a
# partial file (an output that is neither absent, nor its old contents, nor complete), an
# overwritten file (a device node, FIFO or link that is no longer one), or a temp file left behind.
# Prints the totals; exits non-zero when any is above zero.
#   run_hostile.sh MESHSCOPE_BINARY WORK_FOLDER
set -u
bin=${1:?usage: run_hostile.sh MESHSCOPE_BINARY WORK_FOLDER}
work=${2:?usage: run_hostile.sh MESHSCOPE_BINARY WORK_FOLDER}
limit=${MESHSCOPE_HOSTILE_TIMEOUT:-120}
rm -rf "$work" && mkdir -p "$work/in" "$work/out" || exit 2
cd "$work" || exit 2

mid_write=0 last_rc=0 tried=0 crashes=0 hangs=0 partial=0 overwritten=0 leftovers=0 wrong_exit=0
fail() { echo "hostile: $*" >&2; }

# run EXPECT NAME ARGS...: EXPECT is ok (exit 0), err (exit non-zero) or any.
run() {
  local expect=$1 name=$2
  shift 2
  tried=$((tried + 1))
  timeout -k 5 "$limit" "$bin" "$@" >"out/$name.stdout" 2>"out/$name.stderr" </dev/null
  local rc=$?
  last_rc=$rc
  if [ $rc = 124 ] || [ $rc = 137 ]; then
    hangs=$((hangs + 1)); fail "HANG $name: $*"
  elif [ $rc -ge 128 ] || grep -qE "AddressSanitizer|LeakSanitizer|runtime error:|terminate called" "out/$name.stderr"; then
    crashes=$((crashes + 1)); fail "CRASH $name (rc $rc): $*"; head -c 2000 "out/$name.stderr" >&2
  elif [ "$expect" = ok ] && [ $rc != 0 ]; then
    wrong_exit=$((wrong_exit + 1)); fail "EXIT $rc, expected 0: $name: $(head -c 300 "out/$name.stderr")"
  elif [ "$expect" = err ] && [ $rc = 0 ]; then
    wrong_exit=$((wrong_exit + 1)); fail "EXIT 0, expected an error: $name: $*"
  fi
  if [ "$expect" = err ] && [ $rc != 0 ] && [ "$(grep -c . "out/$name.stderr")" -gt 12 ]; then
    fail "note: $name printed $(grep -c . "out/$name.stderr") stderr lines"
  fi
  return 0
}

# no_temps FOLDER: counts temp files of unfinished writes left in FOLDER.
no_temps() {
  local n
  n=$(find "$1" -maxdepth 1 -name '.*.tmp.*' | wc -l)
  if [ "$n" -gt 0 ]; then leftovers=$((leftovers + n)); fail "LEFTOVER temp files in $1: $(ls -a "$1" | grep tmp)"; fi
}

# --- malformed traces -------------------------------------------------------------------------
good='{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":2}'
t=in/trace
printf '{"traceEvents":[%s,%s]}' "$good" "$good" >$t.good.json
printf '' >$t.empty.json
printf '{"traceEvents":[]}' >$t.no_events.json
printf '{"traceEvents":[{"name":"a","ts":1,"dur":2}]}' >$t.no_ph.json
printf '{"traceEvents":[%s,{"ph":"X","name"' "$good" >$t.truncated.json
printf '{"traceEvents":[%s' "$good" >$t.unclosed_object.json
printf '[%s,%s' "$good" "$good" >$t.unclosed_array.json
printf '{"traceEvents":[{"ph":"X","name":"ids","pid":{"a":1},"tid":[1],"ts":1,"dur":1}]}' >$t.pid_object.json
printf '{"traceEvents":[{"ph":"X","name":"n","pid":0,"tid":0,"ts":NaN,"dur":Infinity}]}' >$t.nan.json
printf '{"traceEvents":[{"ph":"X","name":"n","pid":0,"tid":0,"ts":1e308,"dur":1e308}]}' >$t.huge_numbers.json
printf '{"traceEvents":[{"ph":"X","name":"n","pid":0,"tid":0,"ts":9223372036854775807,"dur":9223372036854775807}]}' >$t.int_overflow.json
printf '{"traceEvents":[{"ph":"X","name":"n","pid":0,"tid":0,"ts":5,"dur":-3}]}' >$t.negative_dur.json
printf '{"traceEvents":[{"ph":"X","name":"\xff\xfe\xc3","pid":0,"tid":0,"ts":1,"dur":1}]}' >$t.bad_utf8.json
printf '{"traceEvents":[{"ph":"X","name":"a\\u0000\x1b[2J","pid":0,"tid":0,"ts":1,"dur":1}]}' >$t.control_bytes.json
printf '\xef\xbb\xbf{"traceEvents":[%s]}' "$good" >$t.bom.json
head -c 200000 /dev/urandom >$t.random.json
printf 'SQLite format 3\0garbage' >$t.sqlite_header_only.sqlite
head -c 100000 /dev/urandom | cat <(printf 'SQLite format 3\0') - >$t.sqlite_random.sqlite
(printf '{"traceEvents":'; head -c 200000 /dev/zero | tr '\0' '['; ) >$t.deep_nesting.json
(printf '{"traceEvents":[{"ph":"X","name":"'; head -c 10000000 /dev/zero | tr '\0' 'N'; printf '","pid":0,"tid":0,"ts":1,"dur":1}]}') >$t.long_name.json
(printf '{"traceEvents":[{"ph":"X","name":"n","pid":0,"tid":0,"ts":1,"dur":1,"args":{'; for i in $(seq 1 2000); do printf '"k%d":%d,' $i $i; done; printf '"z":0}}]}') >$t.many_args.json
printf '{"traceEvents":[{"ph":"s","id":1,"pid":0,"tid":0,"ts":1},{"ph":"f","id":2,"pid":0,"tid":0,"ts":2}]}' >$t.dangling_flows.json
printf '{"traceEvents":[{"ph":"B","name":"b","pid":0,"tid":0,"ts":10},{"ph":"E","pid":0,"tid":0,"ts":5}]}' >$t.end_before_begin.json
printf '{"traceEvents":[%s]} trailing garbage' "$good" >$t.trailing.json
printf '{"traceEvents":{"not":"an array"}}' >$t.events_object.json
printf '"just a string"' >$t.string.json
printf '{"traceEvents":[{"ph":"X","pid":0,"tid":0,"ts":0,"dur":1,"name":"a"},{"ph":"X","pid":0,"tid":0,"ts":-9223372036854775,"dur":1,"name":"b"}]}' >$t.far_apart.json
gzip -c $t.good.json >$t.good.json.gz
head -c 20 $t.good.json.gz >$t.truncated.json.gz
(printf '['; head -c 300000000 /dev/zero | tr '\0' ' ') | gzip -9 >$t.gzip_bomb.json.gz
(cat $t.good.json.gz; printf 'garbage after') >$t.gzip_trailing.json.gz
mkdir -p $t.folder_of_bad && cp $t.truncated.json $t.folder_of_bad/rank0.json && cp $t.good.json $t.folder_of_bad/rank1.json
mkdir -p $t.empty_folder
for f in in/trace.*; do
  name=$(basename "$f")
  run any "analyze_$name" analyze "$f"
  run any "convert_$name" convert "$f" -o "out/converted_$name.json"
  # A failed convert writes nothing; a successful one writes a trace that reads back whole.
  if [ $last_rc != 0 ] && [ -e "out/converted_$name.json" ]; then
    partial=$((partial + 1)); fail "PARTIAL out/converted_$name.json after a failed convert"
  elif [ $last_rc = 0 ] && ! "$bin" analyze "out/converted_$name.json" >/dev/null 2>&1; then
    partial=$((partial + 1)); fail "PARTIAL out/converted_$name.json does not read back"
  fi
  # None holds a GEMM with shapes: calibrate refuses each and writes no hardware file.
  run err "gemm_rates_$name" calibrate --gemm-rates "$f" --hardware h100-sxm --write-hardware "out/hw_$name.json"
  if [ -e "out/hw_$name.json" ]; then
    partial=$((partial + 1)); fail "PARTIAL out/hw_$name.json after a refused calibrate"
  fi
done
run err analyze_no_events analyze $t.no_events.json
run err convert_no_ph convert $t.no_ph.json -o out/no_ph.json
run ok analyze_good analyze $t.good.json
no_temps out

# --- hostile schedules ------------------------------------------------------------------------
s=in/sched
"$bin" schedules --dump 1f1b --pp 2 --microbatches 2 -o $s.good.txt >/dev/null
sed "s/ 1RECV_F0@0[:0-9]*//" $s.good.txt >$s.missing_recv.txt
printf 'mesh pp=1\nmicrobatches 1\nrank 0: 0F0\x1b]0;title\x07\0\n' >$s.control.txt
(printf 'mesh pp=1\nmicrobatches 1\nrank 0: 0'; head -c 10000000 /dev/zero | tr '\0' 'Q'; printf '\n') >$s.huge_token.txt
printf 'mesh dp=1048576 pp=1048576 tp=1048576\nmicrobatches 16777216\n' >$s.huge_mesh.txt
printf 'mesh pp=2\nmicrobatches 1\nrank 0: 0RECV_B0@1:4 0F0 0SEND_F0@1:4 0B0\nrank 1: 1RECV_F0@0:4 1F0 1B0 1SEND_B0@0:4\n' >$s.deadlock.txt
printf 'mesh pp=-3\n' >$s.negative.txt
printf '\0\0\0\0' >$s.nul.txt
truncate -s 20G $s.sparse_20g.txt
for f in $s.*; do
  run any "validate_$(basename "$f")" validate "$f"
done
run err validate_dev_zero validate /dev/zero
run err run_dev_zero run --schedule-file /dev/zero
run err calibrate_gemm_dev_zero calibrate --gemm-rates /dev/zero --hardware h100-sxm
run err calibrate_gemm_sparse calibrate --gemm-rates $s.sparse_20g.txt --hardware h100-sxm
run err run_missing_recv run --schedule-file $s.missing_recv.txt --no-validate --no-check --layers 2 --timeout 5
run err run_deadlock run --schedule-file $s.deadlock.txt --no-validate --no-check --layers 2 --timeout 1
rm -f $s.sparse_20g.txt

# --- hostile arguments ------------------------------------------------------------------------
run err run_layers_max run --layers 2147483647
run err run_layers_hidden run --layers 1000000 --hidden 1024
run err run_hidden_zero run --hidden 0
run err run_batch_uneven run --batch 7 --microbatches 3
run err run_moe_layers_max run --model moe --layers 2147483647 --experts 1024
run err run_moe_experts_hidden run --model moe --layers 1000 --hidden 16384 --experts 1024
run err run_moe_capacity_nan run --model moe --capacity-factor nan
run err run_moe_capacity_inf run --model moe --capacity-factor inf
run err run_moe_top_k_over run --model moe --experts 2 --top-k 3
run err run_moe_ep_not_divisor run --model moe -s dp --dp 6 --ep 4 --experts 8 --batch 48
run err run_moe_ep_uneven run --model moe -s dp --dp 3 --ep 3
run err run_steps_zero run --steps 0
run err run_timeout_zero run --timeout 0
run err run_out_missing_folder run --out /nonexistent/x.json
run err run_out_empty run --out ""
run err run_out_proc run --out /proc/version
run err unknown_command frobnicate
run err schedules_unknown schedules --dump nosuchfamily
run err simulate_missing simulate --config /nonexistent.json
run ok version --version

# --- hostile hand-written JSON files ----------------------------------------------------------
# Configs, hardware files and calibrations a user writes (traces/json_file.h): each must be one
# located error, never a crash, a silent default or a raw parser message.
model='"model": {"kind": "gpt", "layers": 4, "hidden": 256, "heads": 4, "seq": 128, "vocab": 1000}'
cfg() { printf '{%s, "mesh": {"pp": 2}, "batch": {"global": 8, "micro": 1}, "cluster": {"gpu": "%s"}}' "$model" "$1"; }
cfg a100-80gb > in/ok.json
catalog=$(dirname "$bin")/catalog/a100-80gb.json
hw() {  # NAME SED-EXPRESSION: a catalog entry edited, and a config that names it
  sed "$2" "$catalog" > "in/$1.hw.json"
  cfg "$PWD/in/$1.hw.json" > "in/$1.json"
}
run ok json_ok predict --config in/ok.json
{ printf '{%s, "x": ' "$model"; head -c 20000 /dev/zero | tr '\0' '['; head -c 20000 /dev/zero | tr '\0' ']'; printf '}'; } > in/deep.json
run err json_deep predict --config in/deep.json
printf '{%s, "mesh": {"pp": 2}, "mesh": {"dp": 2}}' "$model" > in/twice.json
run err json_key_twice predict --config in/twice.json
printf '{%s, "batch": {"global": 1e999}}' "$model" > in/huge_number.json
run err json_huge_number predict --config in/huge_number.json
: > in/empty.json
run err json_empty predict --config in/empty.json
head -c 4096 /dev/urandom > in/random.json
run err json_random predict --config in/random.json
hw unknown_key 's/"compute_units": 108/"compute_units": 108, "compute_unit": 1/'
run err hw_unknown_key predict --config in/unknown_key.json
hw count_beyond_int 's/"compute_units": 108/"compute_units": 3e9/'
run err hw_count_beyond_int predict --config in/count_beyond_int.json
hw key_twice 's/"compute_units": 108/"compute_units": 108, "compute_units": 1/'
run err hw_key_twice predict --config in/key_twice.json
mkdir -p in/folder.hw.json && cfg "$PWD/in/folder.hw.json" > in/folder.json
run err hw_folder predict --config in/folder.json
printf '{"format": "meshscope-calibration", "hardware": "cpu-local", "computes": {}}' > in/calibration_typo.json
run err calibration_typo predict --config in/ok.json --calibration in/calibration_typo.json
printf '{"format": "meshscope-calibration", "hardware": "cpu-local", "p2p": {"samples": 1e30}}' > in/calibration_count.json
run err calibration_count predict --config in/ok.json --calibration in/calibration_count.json
for name in json_deep json_key_twice json_huge_number json_empty hw_unknown_key hw_count_beyond_int \
    hw_key_twice hw_folder calibration_typo calibration_count; do
  grep -q "in/" "out/$name.stderr" && ! grep -q "json.exception\|basic_filebuf" "out/$name.stderr" \
    || { wrong_exit=$((wrong_exit + 1)); fail "UNLOCATED $name: $(head -c 300 "out/$name.stderr")"; }
done

# --- special files and links as outputs -------------------------------------------------------
printf 'b,m,n,k,flops_per_s\n1,4096,4096,4096,7e14\n1,2048,2048,2048,5e14\n1,1024,1024,1024,2.4e14\n' >in/gemm_rates.csv
run ok gemm_rates_table calibrate --gemm-rates in/gemm_rates.csv --hardware h100-sxm --write-hardware out/h100_calibrated.json
mkfifo out/fifo
printf 'kept' >out/target.json
ln -s target.json out/link.json
mknod out/null c 1 3 2>/dev/null || true
for o in out/fifo out/link.json out/null; do
  [ -e "$o" ] || [ -L "$o" ] || continue
  run err "convert_to_$(basename $o)" convert $t.good.json -o "$o"
  run err "schedules_to_$(basename $o)" schedules --dump 1f1b --pp 2 -o "$o"
  run err "run_to_$(basename $o)" run --layers 2 --steps 1 --out "$o"
  run err "hardware_to_$(basename $o)" calibrate --gemm-rates in/gemm_rates.csv --hardware h100-sxm --write-hardware "$o"
done
[ -p out/fifo ] || { overwritten=$((overwritten + 1)); fail "OVERWRITTEN out/fifo"; }
[ -L out/link.json ] || { overwritten=$((overwritten + 1)); fail "OVERWRITTEN out/link.json"; }
[ "$(cat out/target.json)" = kept ] || { overwritten=$((overwritten + 1)); fail "OVERWRITTEN out/target.json through the link"; }
if [ -e out/null ] && [ ! -c out/null ]; then overwritten=$((overwritten + 1)); fail "OVERWRITTEN out/null"; fi
run ok convert_to_stdout convert $t.good.json -o -
no_temps out

# --- signals during writes --------------------------------------------------------------------
# A trace large enough that converting it takes a while: the signal lands inside the write.
big=in/big.json
{
  printf '{"traceEvents":['
  for i in $(seq 0 199999); do printf '{"ph":"X","cat":"kernel","name":"k%d","pid":%d,"tid":7,"ts":%d,"dur":1},' $((i % 50)) $((i % 8)) $i; done
  printf '%s]}' "$good"
} >$big
mkdir -p out/kills
"$bin" convert $big -o out/kills/reference.json >/dev/null 2>&1
# Half the signals at fixed times from the start (most land while the input is read), half once
# the temp file exists (inside the write itself).
for sig in TERM INT KILL; do
  for when in 0.3 1.0 2.0 w0 w0.02 w0.05; do
    tried=$((tried + 1))
    target=out/kills/victim_$sig.json
    printf 'previous contents' >$target
    "$bin" convert $big -o $target >/dev/null 2>&1 &
    pid=$!
    case $when in
      w*)
        for _ in $(seq 1 3000); do
          ls -a out/kills | grep -q "^\.victim_$sig.json.tmp\.$pid\." && break
          kill -0 $pid 2>/dev/null || break
          sleep 0.01
        done
        sleep "${when#w}" ;;
      *) sleep "$when" ;;
    esac
    # Did the signal land inside the write (its temp file exists)? Counted for the report.
    if ls -a out/kills | grep -q "^\.victim_$sig.json.tmp\.$pid\."; then mid_write=$((mid_write + 1)); fi
    kill -$sig $pid 2>/dev/null
    wait $pid 2>/dev/null
    if [ "$(cat $target)" != "previous contents" ] && ! cmp -s $target out/kills/reference.json; then
      partial=$((partial + 1)); fail "PARTIAL $target after SIG$sig at $when"
    fi
    if [ $sig != KILL ]; then no_temps out/kills; fi
  done
done
# kill -9 leaves its temp file; the next write of that target sweeps it once it is stale.
find out/kills -name '.*.tmp.*' -exec touch -d '-11 minutes' {} +
for sig in KILL; do "$bin" convert $t.good.json -o out/kills/victim_$sig.json >/dev/null 2>&1; done
no_temps out/kills

# --- concurrent writers of one path -----------------------------------------------------------
for round in 1 2 3 4 5; do
  for w in 1 2 3 4 5 6; do
    ( "$bin" schedules --dump 1f1b --pp 4 --microbatches 64 -o out/concurrent.txt >/dev/null 2>out/concurrent_${round}_$w.err \
        || echo "writer failed: $(cat out/concurrent_${round}_$w.err)" >>out/concurrent.failures ) &
  done
  wait
  tried=$((tried + 6))
done
if [ -s out/concurrent.failures ]; then wrong_exit=$((wrong_exit + $(wc -l <out/concurrent.failures))); fail "$(head -3 out/concurrent.failures)"; fi
"$bin" validate -q out/concurrent.txt || { partial=$((partial + 1)); fail "PARTIAL out/concurrent.txt"; }
no_temps out

echo "signals: $mid_write of 18 landed while the output was being written"
echo "hostile inputs: $tried tried, $crashes crashes, $hangs hangs, $partial partial files, $overwritten overwritten files, $leftovers temp files left, $wrong_exit wrong exit codes"
[ $crashes = 0 ] && [ $hangs = 0 ] && [ $partial = 0 ] && [ $overwritten = 0 ] && [ $leftovers = 0 ] && [ $wrong_exit = 0 ]
