#!/usr/bin/env bash
# Fails (and names the files) when a tracked C++ or CUDA source differs from clang-format's layout
# under the repository's .clang-format. `scripts/check-format.sh --fix` rewrites them instead.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.cu' '*.cuh' '*.cpp.in')
if [ "${1:-}" = --fix ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
# Batches of files, one clang-format per batch and core; a file that differs is named in
# clang-format's own "FILE:LINE:COL: error: code should be clang-formatted" lines. Any other failure
# (a crash, a missing file) fails the check with clang-format's words.
report=$(mktemp)
trap 'rm -f "$report"' EXIT
status=0
printf '%s\0' "${files[@]}" |
  xargs -0 -n 40 -P "$(nproc)" clang-format --dry-run -Werror 2> "$report" >/dev/null || status=$?
mapfile -t bad < <(sed -n 's/^\(.*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' \
  "$report" | sort -u)
if [ "$status" != 0 ] && [ ${#bad[@]} -eq 0 ]; then
  echo "check-format: clang-format failed (exit $status):" >&2
  head -n 20 "$report" >&2
  exit 1
fi
if [ ${#bad[@]} -gt 0 ]; then
  echo "check-format: ${#bad[@]} file(s) differ from clang-format (scripts/check-format.sh --fix):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files formatted"
