#!/usr/bin/env bash
# The fixed cost of one watcher poll and of one start: CPU ms (user + system, from
# wait4 rusage) of `rxnode watch --once` against an idle bare origin (the marker at the
# tip: no history walk), of a plain `git fetch` of the same branch, and of `rxnode --version`
# (the floor: process start alone). Median, min and max of REPS runs each, interleaved.
# With BASELINE (another rxnode binary, e.g. a build of the previous commit) the same
# measures run for it too, alternating with RXNODE, each on a clone of its own.
# LEDGER=N first pads each clone's ledger (and its mirror) with N lines of watcher starts and
# stops, as a node that has run for a long time has. IDLE_S=S then also leaves a watcher
# polling (--interval 0.25) for S seconds: per idle poll = (its CPU − the median start-up
# and poll above) / (polls − 1), the polls counted from its -v log.
# LEDGERS="0 1000 10000" then measures, for each N, a named node (`node set-name`, which makes
# its key, as any node that approved a task has) whose ledger is padded to N lines: the median
# of REPS `watch --once` (user + system CPU) and of REPS `git fetch` of the same branch on the
# same clone, interleaved, and with IDLE_S the CPU per idle poll of a watcher left running; each
# binary on a fresh clone of its own. GAP_S=S waits S seconds before each `watch --once` there,
# as a timer starting it would (default 0: back to back, so each start finds the ledger written
# a moment ago; docs/safety.md#the-ledger-checkpoint).
# See docs/benchmarks.md#watcher-idle-and-poll-cost.
# usage: [LEDGER=N] [IDLE_S=S] [LEDGERS="N1 N2 …"] [GAP_S=S] scripts/bench-poll.sh [REPS] [RXNODE] [BASELINE]
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
pad_ledger() { # pad_ledger CHECKOUT N: N older lines before the ledger's own, in both copies
  python3 - "$1" "$2" <<'PY'
import json, os, sys
rx, n = sys.argv[1], int(sys.argv[2])
for p in (os.path.join(rx, ".local/rx_agent_ledger.jsonl"), os.path.join(rx, ".git/rxnode/ledger.jsonl")):
    own = open(p).read()
    with open(p, "w") as f:
        for i in range(n):
            if i % 2 == 0:
                e = {"at": "2026-01-01T00:00:00+00:00", "event": "watcher_started",
                     "detail": {"branch": "video-development", "interval_s": 30.0, "no_prompt": True,
                                "once": False, "pid": 1000 + i, "remote": "origin",
                                "task_path": "docs/handoff/NEXT_RX_TASK.md"}}
            else:
                e = {"at": "2026-01-01T00:00:01+00:00", "event": "watcher_stopped", "detail": {"reason": "done"}}
            f.write(json.dumps(e) + "\n")
        f.write(own)
PY
}
if [ -n "${LEDGER:-}" ]; then
  pad_ledger "$WORK/rx" "$LEDGER"
  [ -z "$BASE" ] || pad_ledger "$WORK/rx-base" "$LEDGER"
  echo "# ledger: $(wc -l <"$WORK/rx/.local/rx_agent_ledger.jsonl") lines before the runs"
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
idle() { # idle BIN CHECKOUT LABEL ONCE_FILE: a watcher polling for IDLE_S seconds; CPU per idle poll
  local once
  once="$(sort -n "$4" | awk '{a[NR]=$1} END {print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}')"
  python3 - "$1" "$2" "$IDLE_S" "$once" "$3" <<'PY'
import os, signal, subprocess, sys, time
bin_, rx, secs, once, label = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
log = open(rx + ".idle.log", "w+b")
p = subprocess.Popen([bin_, "-v", "--repo", rx, "watch", "--no-prompt", "--interval", "0.25"],
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
time.sleep(secs)
p.send_signal(signal.SIGTERM)
_, _, ru = os.wait4(p.pid, 0)
log.seek(0)
err = log.read().decode(errors="replace")
cpu = (ru.ru_utime + ru.ru_stime) * 1000
polls = err.count("poll: nothing new")
per = (cpu - once) / (polls - 1) if polls > 1 else float("nan")
print("%-34s %d polls in %.0f s, %.1f ms CPU: %.2f ms per idle poll" % (label, polls, secs, cpu, per))
PY
}
if [ -n "${IDLE_S:-}" ]; then
  idle "$BIN" "$WORK/rx" "rxnode idle watcher" "$WORK/watch"
  [ -z "$BASE" ] || idle "$BASE" "$WORK/rx-base" "baseline idle watcher" "$WORK/watch-base"
fi
if [ -n "${LEDGERS:-}" ]; then
  by_ledger() { # by_ledger BIN LABEL N: a named node with an N-line ledger, idle
    local rx="$WORK/by-$2-$3"
    G clone -q -b "$BR" "$WORK/origin.git" "$rx"
    "$1" --repo "$rx" node set-name BENCH-RX </dev/null >/dev/null 2>&1
    "$1" --repo "$rx" watch --once </dev/null >/dev/null 2>&1
    pad_ledger "$rx" "$3"
    "$1" --repo "$rx" watch --once </dev/null >/dev/null 2>&1   # the padded ledger read once
    : >"$rx.once"; : >"$rx.git"
    for _ in $(seq "$REPS"); do
      [ "${GAP_S:-0}" = 0 ] || sleep "$GAP_S"
      cpu_ms "$1" --repo "$rx" watch --once >>"$rx.once"
      cpu_ms git -C "$rx" fetch -q origin "$BR" >>"$rx.git"
    done
    stats "$rx.once" "$2 watch --once, ledger $3"
    stats "$rx.git" "git fetch (same clone), ledger $3"
    [ -z "${IDLE_S:-}" ] || idle "$1" "$rx" "$2 idle watcher, ledger $3" "$rx.once"
    echo "#   ledger at the end: $(wc -l <"$rx/.local/rx_agent_ledger.jsonl") lines, load $(cut -d' ' -f1-3 /proc/loadavg)"
  }
  for n in $LEDGERS; do
    by_ledger "$BIN" rxnode "$n"
    [ -z "$BASE" ] || by_ledger "$BASE" baseline "$n"
  done
fi
echo "# ledger at the end: $(wc -l <"$WORK/rx/.local/rx_agent_ledger.jsonl") lines"
echo "# load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
