#!/usr/bin/env bash
# The cost of one watcher poll over a long history: CPU seconds and peak RSS of
# `rxnode watch --once` (via /usr/bin/time -v) after the main PC pushed N commits,
# then after a force push of an unrelated N-commit history, then the poll after
# that (which must not pay again). See docs/benchmarks.md.
# usage: scripts/bench-history.sh [N] [RXNODE]   (N defaults to 200000; RXNODE to target/debug/rxnode)
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-200000}"
BIN="$(realpath "${2:-${CARGO_TARGET_DIR:-target}/debug/rxnode}")"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
BR=video-development
TP=docs/handoff/NEXT_RX_TASK.md
G() { git -c user.name=b -c user.email=b@example.invalid "$@"; }
echo "# machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); binary $BIN"
G init -q --bare "$WORK/origin.git"
G init -q "$WORK/main"
cd "$WORK/main"
G checkout -q -b "$BR"
echo start >README.md
G add README.md && G commit -q -m start
G remote add origin "$WORK/origin.git"
G push -q origin "$BR"
BASE=$(git rev-parse HEAD)
G clone -q -b "$BR" "$WORK/origin.git" "$WORK/rx"
RX() { "$BIN" --repo "$WORK/rx" "$@"; }
RX watch --once </dev/null >/dev/null 2>&1   # first start: the marker at the tip

# N commits: each touches notes.txt; every 1000th also rewrites the task file.
gen() { # $1 = ref, $2 = "from" line or empty, $3 = task ID prefix, $4 = time base
python3 - "$N" "$1" "$2" "$3" "$4" "$BASE" "$BR" "$TP" <<'PY'
import sys
n, ref, frm, pfx, t0, base, br, tp = int(sys.argv[1]), *sys.argv[2:]
out = sys.stdout.buffer
w = out.write
for i in range(n):
    msg = b"commit %d\n" % i
    w(b"commit %s\nmark :%d\ncommitter Main PC <m@example.invalid> %d +0000\ndata %d\n%s" % (ref.encode(), i + 1, int(t0) + i, len(msg), msg))
    if i == 0 and frm:
        w(b"from %s\n" % frm.encode())
    note = b"%d\n" % i
    w(b"M 100644 inline notes.txt\ndata %d\n%s\n" % (len(note), note))
    if i % 1000 == 999:
        body = ("TASK_ID = %s%06d\nTASK_TITLE = t\nSOURCE_BRANCH = %s\nEXPECTED_HEAD = %s\n"
                "REQUIRES_APPROVAL = YES\nHARDWARE_ACCESS = NO\nRF_RX = NO\nRF_TX = NO\n"
                "ALLOW_COMMIT = NO\nALLOW_PUSH = NO\n\n# Task\n" % (pfx, i, br, base)).encode()
        w(b"M 100644 inline %s\ndata %d\n%s\n" % (tp.encode(), len(body), body))
w(b"done\n")
PY
}
measure() { # $1 = label; the objects are fetched first, so the figure is the poll's own walk
  git -C "$WORK/rx" fetch -q origin
  /usr/bin/time -v "$BIN" --repo "$WORK/rx" watch --once --interval 0.2 </dev/null >/dev/null 2>"$WORK/time.txt" || true
  local u s r
  u=$(awk -F': ' '/User time/ {print $2}' "$WORK/time.txt")
  s=$(awk -F': ' '/System time/ {print $2}' "$WORK/time.txt")
  r=$(awk -F': ' '/Maximum resident/ {print $2}' "$WORK/time.txt")
  printf '%-52s cpu %6.2f s  max RSS %7.1f MB\n' "$1" "$(echo "$u + $s" | bc)" "$(echo "$r / 1024" | bc -l)"
  grep -m3 -E 'NOT EXAMINED|HISTORY REWRITTEN|error' "$WORK/time.txt" | cut -c1-160 | sed 's/^/    /' || true
}
gen "refs/heads/$BR" "$BASE" A 1700000000 | G fast-import --quiet --done --force
G push -q origin "$BR"
measure "poll after $N new commits (same history)"
measure "next poll (tip unchanged)"
gen refs/heads/other "" B 1800000000 | G fast-import --quiet --done --force
G push -q --force origin "other:$BR"
measure "poll after force push of an unrelated $N-commit history"
G checkout -q -f other && G commit -q --allow-empty -m one-more && G push -q origin "other:$BR"
measure "next poll (one commit more)"
G push -q --force origin "$BR:$BR"
measure "poll after force push back to the first history"
