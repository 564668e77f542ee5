#!/bin/bash
# o377: the main PC pushes 150 commits whose messages are each just under the 2 MiB a commit may have (all 'x'; under
# 600 KB pushed). Each commit passes the one-commit bound, so the watcher's walk read and parsed all 300 MB of them,
# several times over, in one poll: seconds of CPU that no budget bounded. Witness: the poll's CPU (user + system from
# /usr/bin/time) and whether it stopped at a budget it names.
. "$(dirname "$0")/lib.sh"
newlab walkbytes
rxn watch --once </dev/null >/dev/null 2>&1   # the first start: the marker at the tip
python3 - >$L/fi.txt <<'PY'
import sys
out = sys.stdout.buffer
out.write(b"reset refs/heads/video-development\nfrom refs/heads/video-development^0\n")
for i in range(150):
    m = b"x" * 2_000_000 + b"%09d\n" % i
    out.write(b"commit refs/heads/video-development\ncommitter M <m@x.invalid> %d +0000\ndata %d\n" % (1700000000 + i, len(m)) + m + b"\n")
PY
(cd $L/main && git fast-import --quiet <$L/fi.txt && G push -q origin video-development)
echo "pushed: $(du -sk $L/origin.git | cut -f1) KiB in origin, tip $(git -C $L/main rev-parse --short HEAD)"
# The objects are fetched with git first (as scripts/bench-history.sh does), so the poll's CPU is its walk, not the transfer.
G -C $L/rx fetch -q origin video-development
/usr/bin/time -f '%U %S' -o $L/time "$RXN" --repo $L/rx watch --once </dev/null >$L/poll.out 2>&1; rc=$?
cpu=$(tail -1 $L/time | awk '{printf "%.2f", $1 + $2}')
echo "poll: rc=$rc, ${cpu} s CPU: $(grep -a -m1 -E 'RXNODE_WALK_BYTES|examined|refused' $L/poll.out | cut -c1-260)"
marker=$(python3 -c 'import json,sys; print((json.load(open(sys.argv[1])).get("remote_marker") or "")[:7])' $L/rx/.local/rx_agent_state.json)
echo "marker after the poll: $marker"
panics $L/poll.out && { echo "broken: a panic"; exit 0; }
grep -q RXNODE_WALK_BYTES $L/poll.out && [ "$rc" != 0 ] && [ "$marker" != "$(git -C $L/main rev-parse --short=7 HEAD)" ] ||
  { echo "broken: one poll read 150 commits of 2 MB (300 MB) with no byte budget: rc=$rc, ${cpu} s CPU, marker moved to $marker"; exit 0; }
echo held; exit 1
