#!/usr/bin/env bash
# The cost of `rxnode results` and of one `publish --push` with N results
# already on rx-node: CPU seconds and peak RSS (via /usr/bin/time -v) of the
# default listing (newest 50), `--limit 500` (and `--all` with BENCH_ALL=1),
# then of a node publishing one more result beside them.
#
# With --fleet: N results (default 10000) from NODES nodes (default 256), each
# node on a branch of its own (`rx-results/<NODE>`, one commit per result, the
# results' landing times interleaved across the nodes), plus nothing on rx-node;
# measures the main PC's first `results` (the fetch of every branch), then
# `results --no-fetch` (the newest 50 across every branch) and `results nodes
# --no-fetch` (every node's count and newest result), and the static fleet site
# (`results report --html`) of the newest 50 and of every result.
# usage: scripts/bench-results.sh [N] [RXNODE]   (N defaults to 100000)
#        scripts/bench-results.sh --fleet [N] [NODES] [RXNODE]
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = --fleet ]; then
    N="${2:-10000}"
    NODES="${3:-256}"
    BIN="$(realpath "${4:-${CARGO_TARGET_DIR:-target}/debug/rxnode}")"
    WORK="$(mktemp -d)"
    trap 'rm -rf "$WORK"' EXIT
    echo "# machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); binary $BIN"
    git init -q --bare "$WORK/origin.git"
    git init -q "$WORK/main"
    cd "$WORK/main"
    git -c user.name=b -c user.email=b@example.invalid commit -q --allow-empty -m start
    git remote add origin "$WORK/origin.git"
    # One commit per result on its node's branch, each adding rx-results/<ID>/<NODE>/,
    # committed one second after the previous result of the whole fleet.
    python3 - "$N" "$NODES" <<'PY' | git fast-import --quiet
import sys, json
n, nodes = int(sys.argv[1]), int(sys.argv[2])
out = sys.stdout.buffer
t0 = 1764547200
for i in range(n):
    node = "FLEET-%03d" % (i % nodes)
    tid = "T%06d" % i
    res = json.dumps({"schema_version": 1, "task_id": tid, "task_title": "t", "status": "PASS",
        "risk_level": "GREEN", "node": {"name": node},
        "timeline": {"completed_at": "2026-12-01T00:00:00+00:00"}}).encode()
    files = ((b"LOG_META.json", b"{}\n"), (b"RX_RESULT.json", res), (b"RX_RESULT.md", b"# " + tid.encode() + b"\n"))
    msg = ("rx-results: %s (PASS) from %s\n\nTask: %s\nNode-Name: %s\n" % (tid, node, tid, node)).encode()
    ref = b"refs/heads/rx-results/" + node.encode()
    out.write(b"commit " + ref + b"\n")
    out.write(b"committer n <n@example.invalid> %d +0000\n" % (t0 + i))
    out.write(b"data %d\n%s\n" % (len(msg), msg))
    # A branch met again continues from its tip (fast-import's own rule).
    for name, body in files:
        out.write(b"M 100644 inline rx-results/%s/%s/%s\n" % (tid.encode(), node.encode(), name))
        out.write(b"data %d\n%s\n" % (len(body), body))
PY
    git push -q origin 'refs/heads/rx-results/*:refs/heads/rx-results/*'
    measure_fleet() {
        local label="$1"; shift
        /usr/bin/time -v "$BIN" --repo "$WORK/main" --json "$@" >"$WORK/out.json" 2>"$WORK/time.txt" || { tail -5 "$WORK/time.txt"; }
        local w u s r
        w=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$WORK/time.txt")
        u=$(awk -F': ' '/User time/ {print $2}' "$WORK/time.txt")
        s=$(awk -F': ' '/System time/ {print $2}' "$WORK/time.txt")
        r=$(awk -F': ' '/Maximum resident/ {print $2}' "$WORK/time.txt")
        printf '%-36s wall %8s  cpu %6.2f s  max RSS %7.1f MB  %s\n' "$label" "$w" "$(echo "$u + $s" | bc)" "$(echo "$r / 1024" | bc -l)" \
            "$(python3 -c '
import json, sys
v = json.load(open(sys.argv[1]))
if "index" in v:
    print("%d result pages, %d pictures, %d nodes" % (v["results"], v["pictures"], v["nodes"]))
elif "results" in v:
    print("%d rows of %s results on %d branches" % (len(v["results"]), v["total"], len(v["branches"])))
else:
    print("%d nodes" % len(v["nodes"]))' "$WORK/out.json")"
    }
    echo "# $N results from $NODES nodes, each node on rx-results/<NODE> (one commit per result)"
    measure_fleet "results (first: fetches every branch)" results
    measure_fleet "results --no-fetch (newest 50)" results --no-fetch
    measure_fleet "results nodes --no-fetch" results --no-fetch nodes
    measure_fleet "results nodes (fetch + read)" results nodes
    measure_fleet "results report --html (newest 50)" results --no-fetch report --html "$WORK/site50"
    measure_fleet "results report --html --all" results --no-fetch --all report --html "$WORK/site"
    exit 0
fi
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
# The N results' blobs through fast-import, then their trees with mktree --batch
# (one commit holding all N, as a long-lived branch does), then one more commit
# adding a single result on top, as the next publication would.
python3 - "$N" "$WORK" <<'PY'
import sys, json, subprocess
n, work = int(sys.argv[1]), sys.argv[2]
def files(i):
    tid = "T%06d" % i
    res = json.dumps({"schema_version": 1, "task_id": tid, "task_title": "t", "status": "PASS",
        "risk_level": "GREEN", "timeline": {"completed_at": "2026-01-01T00:00:00+00:00"}}).encode()
    return tid, ((b"LOG_META.json", b"{}\n"), (b"RX_RESULT.json", res), (b"RX_RESULT.md", b"# " + tid.encode() + b"\n"))
stream = bytearray()
for i in range(n):
    for k, (_, body) in enumerate(files(i)[1]):
        stream += b"blob\nmark :%d\ndata %d\n%s\n" % (3 * i + k + 1, len(body), body)
stream += b"done\n"
subprocess.run(["git", "fast-import", "--quiet", "--done", "--export-marks=" + work + "/marks"], input=bytes(stream), check=True)
marks = {}
for line in open(work + "/marks"):
    m, sha = line.split()
    marks[int(m[1:])] = sha
def mktree(trees):
    inp = "\n\n".join(trees) + "\n"
    out = subprocess.run(["git", "mktree", "--batch"], input=inp.encode(), capture_output=True, check=True).stdout.decode().split()
    assert len(out) == len(trees), (len(out), len(trees))
    return out
node_trees = mktree(["\n".join("100644 blob %s\t%s" % (marks[3 * i + k + 1], name.decode()) for k, (name, _) in enumerate(files(i)[1])) for i in range(n)])
id_trees = mktree(["040000 tree %s\tLAB-A" % t for t in node_trees])
results = mktree(["\n".join("040000 tree %s\tT%06d" % (t, i) for i, t in enumerate(id_trees))])[0]
root = mktree(["040000 tree %s\trx-results" % results])[0]
env = {"GIT_AUTHOR_NAME": "n", "GIT_AUTHOR_EMAIL": "n@example.invalid", "GIT_COMMITTER_NAME": "n",
       "GIT_COMMITTER_EMAIL": "n@example.invalid", "PATH": "/usr/bin:/bin:/usr/local/bin"}
c = subprocess.run(["git", "commit-tree", root, "-m", "rx-results: %d results" % n], env=env, capture_output=True, check=True).stdout.decode().strip()
subprocess.run(["git", "update-ref", "refs/heads/rx-node", c], check=True)
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
if [ "${BENCH_ALL:-0}" = 1 ]; then measure --all; fi

# Publication beside N results: one node's `publish --push` (objects fetched first).
BR=video-development
G() { git -c user.name=b -c user.email=b@example.invalid "$@"; }
cd "$WORK/main"
G checkout -q -b "$BR"
G push -q origin "$BR"
"$BIN" --repo "$WORK/main" task new --id PUB_SCALE --title "publish beside many" --force >/dev/null
G add docs/handoff/NEXT_RX_TASK.md && G commit -q -m task && G push -q origin "$BR"
G clone -q -b "$BR" "$WORK/origin.git" "$WORK/rx"
"$BIN" --repo "$WORK/rx" node set-name LAB-B >/dev/null
echo a | "$BIN" --repo "$WORK/rx" watch --once --interval 0.2 >/dev/null 2>&1
"$BIN" --repo "$WORK/rx" mark-completed PUB_SCALE >/dev/null
git -C "$WORK/rx" fetch -q origin "+refs/heads/rx-node:refs/remotes/origin/rx-node"
echo "PUBLISH PUB_SCALE" | /usr/bin/time -v "$BIN" --repo "$WORK/rx" publish PUB_SCALE --push >"$WORK/pub.txt" 2>"$WORK/time.txt" || { tail -5 "$WORK/time.txt"; }
u=$(awk -F': ' '/User time/ {print $2}' "$WORK/time.txt")
s=$(awk -F': ' '/System time/ {print $2}' "$WORK/time.txt")
r=$(awk -F': ' '/Maximum resident/ {print $2}' "$WORK/time.txt")
printf 'publish --push beside %s results              cpu %6.2f s  max RSS %7.1f MB (%s)\n' "$N" "$(echo "$u + $s" | bc)" "$(echo "$r / 1024" | bc -l)" "$(grep -m1 -o 'pushed to .*' "$WORK/pub.txt" || echo 'did not push')"
