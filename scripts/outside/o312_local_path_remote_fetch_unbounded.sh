#!/bin/bash
# o312: the node's remote is a plain path on this machine (as `git clone /srv/lab.git` leaves it, no file://), and the
# main PC pushes 300 commits each rewriting one 2 MiB file by a few bytes. libgit2's local transport packs what it
# sends inside the node's own process — counting, then finding deltas on one worker thread per core — before anything
# is indexed; the fetch CPU budget read only the fetching thread's clock and only while indexing, so one
# `watch --once` spent 8.7 s of CPU at the 3 s budget (42.9 s for a 200 MB pack). Witness: /usr/bin/time of the poll.
. "$(dirname "$0")/lib.sh"
NV=300; SZ=$((2 * 1024 * 1024 - 100))
newlab localpack
policy
rxn watch --once --no-prompt </dev/null >$L/poll0.out 2>&1
push_big_versions $NV $SZ
echo "node's remote: $(git -C $L/rx remote get-url origin)"
/usr/bin/time -o $L/time -f '%e %U %S %M' "$RXN" --repo $L/rx watch --once --no-prompt </dev/null >$L/poll.out 2>&1; rc=$?
read secs user sys kb < <(tail -1 $L/time)
cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
echo "watch --once: rc=$rc, ${secs} s (${cpu} s CPU), peak $((kb / 1024)) MB"
grep -a 'fetch origin' $L/poll.out | cut -c1-260
echo "tracking ref: $(git -C $L/rx rev-parse --short origin/video-development) (origin: $(git -C $L/origin.git rev-parse --short video-development))"
panics $L/poll.out && { echo "broken: a panic"; exit 0; }
awk -v c="$cpu" 'BEGIN { exit !(c > 4.5) }' && { echo "broken: one poll of a plain-path remote spent ${cpu} s of CPU at the 3 s fetch budget"; exit 0; }
[ "$(git -C $L/rx rev-parse origin/video-development)" = "$(git -C $L/origin.git rev-parse video-development)" ] && { echo "broken: the expanding pack was fetched whole (${cpu} s of CPU)"; exit 0; }
grep -aq 'abandoned after .* s of CPU' $L/poll.out || { echo "broken: the fetch failed without saying it reached its CPU budget (rc=$rc)"; exit 0; }
echo held; exit 1
