#!/usr/bin/env bash
# Writes docs/CLI.md: every command's `--help`, as the binaries in BUILD_DIR print it (the
# subcommands are those `meshscope --help` lists). tests/cli/cli_reference_test.cpp fails when the
# page and the binaries differ; rerun this after changing an option or its text:
#   scripts/cli-reference.sh build
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: scripts/cli-reference.sh BUILD_DIR [OUT.md] (e.g. scripts/cli-reference.sh build)}
out=${2:-$root/docs/CLI.md}
bin=$build/meshscope
gui=$build/meshscope-gui
for b in "$bin" "$gui"; do
  [ -x "$b" ] || { echo "cli-reference: $b: no such program (build it first)" >&2; exit 1; }
done
mapfile -t subcommands < <("$bin" --help | sed -n '/^Subcommands:/,$p' | sed -n 's/^  \([a-z-]*\) .*/\1/p')
[ ${#subcommands[@]} -gt 0 ] || { echo "cli-reference: no subcommands in '$bin --help'" >&2; exit 1; }
section() {
  printf '## `%s`\n\n```text\n' "$1"
  shift
  "$@" --help
  printf '```\n\n'
}
tmp=$(mktemp "$out.XXXXXX")
trap 'rm -f "$tmp"' EXIT
{
  printf '# Command-line reference\n\n'
  printf 'Every option of every command, as its `--help` prints it. Written by `scripts/cli-reference.sh\n'
  printf 'build` from the binaries; `tests/cli/cli_reference_test.cpp` fails when this page and the\n'
  printf 'binaries differ. What the commands are for, with examples: the README'"'"'s tour; config keys:\n'
  printf '[CONFIG.md](CONFIG.md); the JSON the commands print: [OUTPUT.md](OUTPUT.md); the viewer:\n'
  printf '[GUI.md](GUI.md); exit codes and what is refused: [RELIABILITY.md](RELIABILITY.md).\n\n'
  section "meshscope" "$bin"
  for c in "${subcommands[@]}"; do section "meshscope $c" "$bin" "$c"; done
  section "meshscope-gui" "$gui"
} > "$tmp"
sed -i -e '$ { /^$/ d }' "$tmp"
mv "$tmp" "$out"
trap - EXIT
echo "cli-reference: wrote $out (${#subcommands[@]} subcommands and the viewer)"
