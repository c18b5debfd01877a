#!/bin/sh
# Runs a GUI test program with an X display: the caller's if DISPLAY is set, else a private Xvfb
# (Mesa's software OpenGL) started for this one run, else none (the tests then skip, saying why).
# Xvfb picks a free display itself (-displayfd), so parallel ctest jobs never race for one, and
# -noreset keeps it up between the windows one test opens and closes in turn.
case " $* " in *" --gtest_list_tests "*) exec "$@" ;; esac
if [ -n "$DISPLAY" ] || ! command -v Xvfb >/dev/null 2>&1; then exec "$@"; fi
fd_file=$(mktemp) || exit 1
Xvfb -displayfd 3 -screen 0 1920x1200x24 -nolisten tcp -noreset 3>"$fd_file" 2>/dev/null &
xvfb=$!
for _ in $(seq 1 100); do
  [ -s "$fd_file" ] && break
  sleep 0.05
done
if [ ! -s "$fd_file" ]; then
  kill "$xvfb" 2>/dev/null
  rm -f "$fd_file"
  echo "with_display.sh: Xvfb did not start" >&2
  exit 1
fi
DISPLAY=":$(cat "$fd_file")" LIBGL_ALWAYS_SOFTWARE=1 "$@"
rc=$?
kill "$xvfb" 2>/dev/null
wait "$xvfb" 2>/dev/null
rm -f "$fd_file"
exit $rc
