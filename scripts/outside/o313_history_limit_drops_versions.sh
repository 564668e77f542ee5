#!/bin/bash
# o313: the main PC pushes 300 versions of a 1 MiB task file (T0000 … T0299, one commit each) between two polls. A poll
# examined only the newest --history-limit (50) versions and reported the 250 older ones NOT EXAMINED — never offered,
# never refused, dropped for good; raising the limit to reach them cost one poll 2.8 s of CPU (300 MiB read and
# checked). A poll now reads at most 32 MiB of task file and the next goes on after it, oldest first. The RX clone
# fetches with git first, so a poll's CPU is its walk. Witness: each `watch --once --no-prompt` (CPU by /usr/bin/time), what each poll says, and the ledger:
# one line per version, in commit order, or the versions without one.
. "$(dirname "$0")/lib.sh"
NV=300
newlab manyversions
policy
rxn watch --once --no-prompt </dev/null >$L/poll0.out 2>&1
cd $L/main
python3 - $NV $BASE <<'PY' | G fast-import --quiet
import sys
nv, base = int(sys.argv[1]), sys.argv[2]
out = sys.stdout.buffer
pad = ("x" * 99 + "\n") * 10200
for v in range(nv):
    body = (f"TASK_ID = T{v:04d}\nTASK_TITLE = t\nSOURCE_BRANCH = video-development\nEXPECTED_HEAD = {base}\n"
            "REQUIRES_APPROVAL = YES\nHARDWARE_ACCESS = NO\nRF_RX = NO\nRF_TX = NO\nALLOW_COMMIT = NO\n"
            "ALLOW_PUSH = NO\n\n# Task\n\nA manual task.\n\n"
            + pad).encode()
    out.write(b"commit refs/heads/video-development\n")
    out.write(f"committer M <m@x.invalid> {1700000000 + v} +0000\ndata 4\ntsk\n".encode())
    if v == 0: out.write(f"from {base}\n".encode())
    out.write(f"M 100644 inline docs/handoff/NEXT_RX_TASK.md\ndata {len(body)}\n".encode() + body + b"\n")
PY
G reset -q --hard video-development
G push -q origin video-development
cd - >/dev/null
echo "pushed $NV versions of a $(git -C $L/main cat-file -s HEAD:docs/handoff/NEXT_RX_TASK.md)-byte task file"
TIP=$(git -C $L/origin.git rev-parse video-development)
git -C $L/rx fetch -q origin   # the objects are here already: each poll's CPU is its walk, not its fetch
maxcpu=0; polls=0; most=0; seen=0
for i in $(seq 1 15); do
  /usr/bin/time -o $L/time -f '%U %S' "$RXN" --repo $L/rx watch --once --no-prompt </dev/null >$L/poll$i.out 2>&1; rc=$?
  read user sys < <(tail -1 $L/time); polls=$i
  cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
  maxcpu=$(awk -v a="$maxcpu" -v b="$cpu" 'BEGIN { print (b > a) ? b : a }')
  echo "poll $i: rc=$rc, ${cpu} s CPU: $(grep -aE 'NOT EXAMINED|examined \(a poll|version\(s\) of' $L/poll$i.out | head -2 | cut -c1-200)"
  panics $L/poll$i.out && { echo "broken: a panic"; exit 0; }
  [ $rc = 0 ] || { echo "broken: poll $i failed (rc=$rc)"; exit 0; }
  now=$(grep -acE '"event":"(offered|superseded|refused|duplicate)"' $L/rx/.local/rx_agent_ledger.jsonl)
  [ $((now - seen)) -gt $most ] && most=$((now - seen)); seen=$now
  "$RXN" --repo $L/rx status 2>&1 | grep -aq 'waiting for the next poll' || break
done
python3 - $L/rx/.local/rx_agent_ledger.jsonl $NV <<'PY' > $L/verdict
import json, sys
ids = []
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e.get("event") in ("offered", "superseded", "refused", "duplicate") and str(e.get("task_id", "")).startswith("T"):
        ids.append(e["task_id"])
want = [f"T{v:04d}" for v in range(int(sys.argv[2]))]
missing = [t for t in want if t not in ids]
print(len(ids), len(missing), missing[0] if missing else "-", "inorder" if ids == sorted(ids) else "outoforder")
PY
read lines missing first order < $L/verdict
echo "after $polls poll(s): $lines version line(s) in the ledger, $missing version(s) without one (first: $first), $order; most in one poll: $most version(s) of 1 MiB, ${maxcpu} s of CPU"
echo "tracking ref $(git -C $L/rx rev-parse --short origin/video-development), examined: $("$RXN" --repo $L/rx status 2>&1 | grep -a '^examined:' | cut -c13-19) (tip ${TIP:0:7})"
[ "$missing" -gt 0 ] && { echo "broken: $missing of $NV task versions never examined (first $first)"; exit 0; }
[ "$order" = inorder ] || { echo "broken: the versions reached the ledger out of commit order"; exit 0; }
[ "$most" -gt 33 ] && { echo "broken: one poll read $most versions of a 1 MiB task file (over its 32 MiB)"; exit 0; }
grep -aq 'NOT EXAMINED' $L/poll*.out && { echo "broken: a poll reported versions NOT EXAMINED"; exit 0; }
echo held; exit 1
