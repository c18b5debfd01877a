#!/usr/bin/env bash
# Builds the libFuzzer targets (the importers, the reader of hand-written JSON files, schedule
# files, `predict --config`, `predict --from-trace`, several ranks' files read as one job) with clang (AddressSanitizer +
# UndefinedBehaviorSanitizer) in their own build folder, writes a seed corpus, and runs each target
# for a bounded time. A crash, a sanitizer report, a leak, a timeout or an out-of-memory fails the
# script (and leaves the reproducer in the build folder's fuzz-artifacts/).
#   FUZZ_SECONDS       seconds per target (default 60)
#   MESHSCOPE_FUZZ_BUILD_DIR  build folder (default build-fuzz)
#   MESHSCOPE_JOBS     parallel build jobs (default 2)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MESHSCOPE_FUZZ_BUILD_DIR:-$root/build-fuzz}
seconds=${FUZZ_SECONDS:-60}
jobs=${MESHSCOPE_JOBS:-2}

. "$root/scripts/compiler-cache.sh"
cmake -S "$root" -B "$build" "${meshscope_cache_flags[@]}" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMESHSCOPE_FUZZ=ON -DMESHSCOPE_TESTS=OFF \
  -DMESHSCOPE_BENCH=OFF -DMESHSCOPE_CUDA=OFF -DMESHSCOPE_GUI=OFF -DMESHSCOPE_MPI=OFF >/dev/null
cmake --build "$build" --target fuzz_chrome_json fuzz_nsys_sqlite fuzz_json_file fuzz_predict_config \
  fuzz_torch_job fuzz_schedule_file fuzz_mixed_job fuzz_seeds -j "$jobs"

seeds=$build/fuzz-seeds
rm -rf "$seeds"
"$build/fuzz/fuzz_seeds" "$seeds"
# The hand-written JSON files meshscope ships seed the JSON reader's target.
mkdir -p "$seeds/json_file"
cp "$root"/sim/predict/configs/*.json "$root"/sim/cost/catalog/*.json "$root"/sim/cost/frameworks/*.json \
  "$seeds/json_file/"
# The configs seed `predict --config`'s target.
mkdir -p "$seeds/predict_config"
cp "$root"/sim/predict/configs/*.json "$seeds/predict_config/"
# The torch pipelining jobs of the fixtures: their schedule CSVs join the families' schedule text
# fuzz_seeds wrote; their rank files, inflated and joined by the separator fuzz_torch_job cuts its
# input at, seed `predict --from-trace`'s target.
mkdir -p "$seeds/torch_job"
for job in "$root"/tests/fixtures/torch/*/; do
  cp "$job"schedule.compute_only.csv "$seeds/schedule/$(basename "$job").csv"
  out="$seeds/torch_job/$(basename "$job")"
  first=1
  for rank in "$job"rank*.json.gz; do
    [ "$first" = 1 ] || printf '\n@@RANK@@\n' >> "$out"
    gzip -dc "$rank" >> "$out"
    first=0
  done
done
# Several ranks' files read as one job: a byte of options (0x02: clocks aligned by collective
# ends; 0x11: by base time, ranks in file order), then the files, joined by the separator
# fuzz_mixed_job cuts its input at: two SQLite exports, a SQLite export beside a Kineto trace.
mkdir -p "$seeds/mixed_job"
sqlite_seed=$seeds/nsys_sqlite/nsys.sqlite
kineto_seed=$seeds/chrome_json/kineto.json
{ printf '\002'; cat "$sqlite_seed"; printf '\n@@RANK@@\n'; cat "$sqlite_seed"; } \
  > "$seeds/mixed_job/two_sqlite"
{ printf '\021'; cat "$sqlite_seed"; printf '\n@@RANK@@\n'; cat "$kineto_seed"; } \
  > "$seeds/mixed_job/sqlite_and_kineto"
artifacts=$build/fuzz-artifacts
mkdir -p "$artifacts"

run() {  # target, seed folder, seconds, extra libFuzzer flags... (unit_timeout: seconds an input)
  local target=$1 seed=$2 seconds=$3 timeout=${unit_timeout:-10}
  shift 3
  local corpus=$build/fuzz-corpus/$target
  mkdir -p "$corpus"
  echo "ci-fuzz: $target for ${seconds}s"
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$build/fuzz/$target" "$corpus" "$seed" -max_total_time="$seconds" -timeout="$timeout" \
      -rss_limit_mb=2048 -malloc_limit_mb=1024 -print_final_stats=1 \
      -artifact_prefix="$artifacts/$target-" "$@" 2>&1 | tail -n 25
  return "${PIPESTATUS[0]}"
}

# Two lanes side by side (each fuzzer is one process on one core): the Chrome JSON importer, then
# the JSON file reader and `predict --from-trace` (torch jobs) for half the time each; the Nsight
# SQLite importer and several ranks' files read as one job, then `predict --config` and schedule
# files, for half the time each. Each report is printed whole when its lane ends, so they do not
# interleave.
logs=$build/fuzz-logs
mkdir -p "$logs"
(run fuzz_chrome_json "$seeds/chrome_json" "$seconds" -dict="$root/fuzz/chrome_json.dict" \
   -max_len=65536 && \
 run fuzz_json_file "$seeds/json_file" $(( (seconds + 1) / 2 )) -dict="$root/fuzz/chrome_json.dict" \
   -max_len=16384 && \
 run fuzz_torch_job "$seeds/torch_job" $(( (seconds + 1) / 2 )) -dict="$root/fuzz/chrome_json.dict" \
   -max_len=2000000) > "$logs/fuzz_json.log" 2>&1 &
json_lane=$!
# `predict --config`'s unit limit is 30 s: a config of thousands of GPUs that does not fit goes
# through `predict`'s alternatives, a dozen simulations; one such input, found by a 450-s run on
# 2026-12-06 (8,192 GPUs), takes 4.0 s instrumented alone and went past 10 s with a build beside
# it. A hang still ends at 30 s.
(run fuzz_nsys_sqlite "$seeds/nsys_sqlite" $(( (seconds + 1) / 2 )) -max_len=65536 && \
 run fuzz_mixed_job "$seeds/mixed_job" $(( (seconds + 1) / 2 )) -dict="$root/fuzz/chrome_json.dict" \
   -max_len=131072 && \
 unit_timeout=30 run fuzz_predict_config "$seeds/predict_config" $(( (seconds + 1) / 2 )) \
   -dict="$root/fuzz/predict_config.dict" -max_len=4096 && \
 run fuzz_schedule_file "$seeds/schedule" $(( (seconds + 1) / 2 )) -max_len=65536) \
  > "$logs/fuzz_nsys_sqlite.log" 2>&1 &
nsys=$!
status=0
wait "$json_lane" || status=1
cat "$logs/fuzz_json.log"
wait "$nsys" || status=1
cat "$logs/fuzz_nsys_sqlite.log"
if [ "$status" != 0 ]; then
  echo "ci-fuzz: a target failed (reproducers in $artifacts)" >&2
  exit 1
fi
echo "ci-fuzz: no crashes"
