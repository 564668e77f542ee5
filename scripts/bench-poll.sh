#!/usr/bin/env bash
# The fixed cost of one watcher poll and of one start: CPU ms (user + system, from
# wait4 rusage) of `rxnode watch --once` against an idle bare origin (the marker at the
# tip: no history walk), of a plain `git fetch` of the same branch, and of `rxnode --version`
# (the floor: process start alone). Median, min and max of REPS runs each, interleaved.
# With BASELINE (another rxnode binary, e.g. a build of the previous commit) the same
# measures run for it too, alternating with RXNODE, each on a clone of its own.
# See docs/benchmarks.md#watcher-idle-and-poll-cost.
# usage: scripts/bench-poll.sh [REPS] [RXNODE] [BASELINE]
#        (REPS defaults to 15; RXNODE to target/release/rxnode)
set -euo pipefail
cd "$(dirname "$0")/.."
REPS="${1:-15}"
BIN="$(realpath "${2:-${CARGO_TARGET_DIR:-target}/release/rxnode}")"
BASE="${3:+$(realpath "$3")}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
BR=video-development
G() { git -c user.name=b -c user.email=b@example.invalid "$@"; }
echo "# machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); binary $BIN${BASE:+, baseline $BASE}"
G init -q --bare "$WORK/origin.git"
G init -q "$WORK/main"
cd "$WORK/main"
G checkout -q -b "$BR"
echo start >README.md
G add README.md && G commit -q -m start
G remote add origin "$WORK/origin.git"
G push -q origin "$BR"
G clone -q -b "$BR" "$WORK/origin.git" "$WORK/rx"
"$BIN" --repo "$WORK/rx" watch --once </dev/null >/dev/null 2>&1   # first start: the marker at the tip
if [ -n "$BASE" ]; then
  G clone -q -b "$BR" "$WORK/origin.git" "$WORK/rx-base"
  "$BASE" --repo "$WORK/rx-base" watch --once </dev/null >/dev/null 2>&1
fi

cpu_ms() { # prints user+system CPU ms of the command given (wait4 rusage, µs resolution)
  python3 -c '
import os, sys
pid = os.fork()
if pid == 0:
    fd = os.open(os.devnull, os.O_RDWR)
    for i in (0, 1, 2):
        os.dup2(fd, i)
    os.execvp(sys.argv[1], sys.argv[1:])
_, _, ru = os.wait4(pid, 0)
print("%.2f" % ((ru.ru_utime + ru.ru_stime) * 1000))
' "$@"
}
: >"$WORK/watch"; : >"$WORK/git"; : >"$WORK/version"; : >"$WORK/watch-base"; : >"$WORK/version-base"
for _ in $(seq "$REPS"); do
  cpu_ms "$BIN" --repo "$WORK/rx" watch --once >>"$WORK/watch"
  cpu_ms git -C "$WORK/rx" fetch -q origin "$BR" >>"$WORK/git"
  cpu_ms "$BIN" --version >>"$WORK/version"
  if [ -n "$BASE" ]; then
    cpu_ms "$BASE" --repo "$WORK/rx-base" watch --once >>"$WORK/watch-base"
    cpu_ms "$BASE" --version >>"$WORK/version-base"
  fi
done
stats() { sort -n "$1" | awk -v l="$2" '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%-34s median %6.2f ms  min %6.2f  max %6.2f  (%d runs)\n", l, m, a[1], a[NR], NR}'; }
stats "$WORK/watch" "rxnode watch --once (idle poll)"
stats "$WORK/git" "git fetch (same branch)"
stats "$WORK/version" "rxnode --version (start floor)"
if [ -n "$BASE" ]; then
  stats "$WORK/watch-base" "baseline watch --once (idle poll)"
  stats "$WORK/version-base" "baseline --version (start floor)"
fi
echo "# load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
