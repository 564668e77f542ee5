#!/bin/bash
# o310: the main PC pushes 600 commits to the watched branch, each rewriting one 2 MiB file of random text by a few
# bytes: a pack of 14 MB whose deltas rebuild 1.2 GB when indexed. No bound on one commit or tree sees it, and the
# node's fetch resolved every delta: 6.7 s of CPU in one `watch --once` (3.7 s for 300 commits: it grows with the
# pack, without bound), again at every poll the branch is sent afresh. Served by git daemon, so the packing is the
# server's work and the indexing the node's. Witness: /usr/bin/time of one `watch --once` (CPU and peak size).
. "$(dirname "$0")/lib.sh"
NV=600; SZ=$((2 * 1024 * 1024 - 100))
newlab packexpand
policy
rxn watch --once --no-prompt </dev/null >$L/poll0.out 2>&1
push_big_versions $NV $SZ
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
setsid git daemon --reuseaddr --listen=127.0.0.1 --port=$PORT --base-path=$L --export-all $L >/dev/null 2>&1 & DP=$!
for i in $(seq 100); do (echo > /dev/tcp/127.0.0.1/$PORT) 2>/dev/null && break; sleep 0.1; done
git -C $L/rx remote set-url origin git://127.0.0.1:$PORT/origin.git
/usr/bin/time -o $L/time -f '%e %U %M' "$RXN" --repo $L/rx watch --once --no-prompt </dev/null >$L/poll.out 2>&1; rc=$?
read secs user kb < <(tail -1 $L/time)
echo "watch --once: rc=$rc, ${secs} s (${user} s CPU), peak $((kb / 1024)) MB"
grep -a 'fetch origin' $L/poll.out | cut -c1-260
echo "tracking ref: $(git -C $L/rx rev-parse --short origin/video-development) (origin: $(git -C $L/origin.git rev-parse --short video-development))"
kill -- -$DP 2>/dev/null; kill $DP 2>/dev/null
panics $L/poll.out && { echo "broken: a panic"; exit 0; }
awk -v u="$user" 'BEGIN { exit !(u > 4.5) }' && { echo "broken: one poll spent ${user} s of CPU indexing a pack that expands to $((NV * SZ >> 20)) MB"; exit 0; }
[ "$(git -C $L/rx rev-parse origin/video-development)" = "$(git -C $L/origin.git rev-parse video-development)" ] && { echo "broken: the expanding pack was fetched whole (${user} s of CPU)"; exit 0; }
grep -aq 'abandoned after .* s of CPU' $L/poll.out || { echo "broken: the fetch failed without saying it reached its CPU budget (rc=$rc)"; exit 0; }
echo held; exit 1
