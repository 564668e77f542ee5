#!/usr/bin/env bash
# The cost of `rxnode results` on the main PC with N results on rx-node (one
# commit per result, as N publications make): CPU seconds and peak RSS of the
# default listing (newest 50), `--limit 500` and `--all`, via /usr/bin/time -v.
# usage: scripts/bench-results.sh [N] [RXNODE]   (N defaults to 100000)
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-100000}"
BIN="$(realpath "${2:-${CARGO_TARGET_DIR:-target}/debug/rxnode}")"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
echo "# machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); binary $BIN"
git init -q --bare "$WORK/origin.git"
git init -q "$WORK/main"
cd "$WORK/main"
git -c user.name=b -c user.email=b@example.invalid commit -q --allow-empty -m start
git remote add origin "$WORK/origin.git"
python3 - "$N" <<'PY' | git fast-import --quiet --done --force
import sys, json
n = int(sys.argv[1]); w = sys.stdout.buffer.write
for i in range(n):
    tid = "T%06d" % i
    res = json.dumps({"schema_version": 1, "task_id": tid, "task_title": "t", "status": "PASS",
        "risk_level": "GREEN", "timeline": {"completed_at": "2026-01-01T00:00:00+00:00"}}).encode()
    msg = b"rx-results: %s\n\nTask: %s\nNode-Name: LAB-A\n" % (tid.encode(), tid.encode())
    w(b"commit refs/heads/rx-node\ncommitter n <n@example.invalid> %d +0000\ndata %d\n%s" % (1700000000 + i, len(msg), msg))
    for name, body in ((b"RX_RESULT.json", res), (b"RX_RESULT.md", b"# " + tid.encode() + b"\n"), (b"LOG_META.json", b"{}\n")):
        w(b"M 100644 inline rx-results/%s/LAB-A/%s\ndata %d\n%s\n" % (tid.encode(), name, len(body), body))
w(b"done\n")
PY
git push -q origin rx-node
"$BIN" --repo "$WORK/main" results --limit 1 >/dev/null 2>&1 || true   # fetch once
measure() {
  /usr/bin/time -v "$BIN" --repo "$WORK/main" --json results --no-fetch "$@" >"$WORK/out.json" 2>"$WORK/time.txt" || true
  local u s r
  u=$(awk -F': ' '/User time/ {print $2}' "$WORK/time.txt")
  s=$(awk -F': ' '/System time/ {print $2}' "$WORK/time.txt")
  r=$(awk -F': ' '/Maximum resident/ {print $2}' "$WORK/time.txt")
  printf 'results %-12s (%s results on rx-node) cpu %6.2f s  max RSS %7.1f MB\n' "$*" "$N" "$(echo "$u + $s" | bc)" "$(echo "$r / 1024" | bc -l)"
}
measure
measure --limit 500
[ "${BENCH_ALL:-0}" = 1 ] && measure --all
true
