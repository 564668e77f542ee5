#!/bin/bash
# o320: on Windows a lock holder's PID was looked up with `tasklist /FI "PID eq N"`, and anything but a
# CSV line naming N read as "that process is dead": a `tasklist` that fails, prints an error, or (Wine) is a
# stub printing nothing. A second `watch` then took the live watcher's `.local\rxnode.lock` over ("taking
# over stale lock … its PID is dead"), two watchers polled and prompted at once, `status` said "watcher: not
# running" while one ran, and `publish` no longer saw a live `run` of the task it publishes.
# RXN here is a Windows build (rxnode.exe, scripts/check-windows.sh --build), run under Wine 8 (wine64);
# the ProcessPrng shim is built with mingw as scripts/windows/wine-loop.sh does. Exit 2: cannot play here.
source "$(dirname "$0")/lib.sh"
# Wine derives a file's DACL from its unix mode: a private umask, as in the operator's profile on Windows.
umask 077; newlab o320
wine_lab || exit 2
wrx() { $W "Z:${L//\//\\}\\bin\\rxnode.exe" --repo "Z:${L//\//\\}\\rx" "$@"; }
wrx node set-name LABW >/dev/null
wrx watch --interval 30 </dev/null >$L/w1.out 2>&1 & w1=$!
for _ in $(seq 1 100); do [ -f $L/rx/.local/rxnode.lock ] && break; sleep 0.2; done
echo "first watcher: $(cat $L/rx/.local/rxnode.lock 2>/dev/null)"
wrx watch --once --interval 0.2 </dev/null >$L/w2.out 2>&1; rc=$?
echo "second watch --once: exit $rc: $(tr '\n' ' ' <$L/w2.out | cut -c1-220)"
wrx status 2>&1 | grep '^watcher:' | cut -c1-160
alive=$(kill -0 $w1 2>/dev/null && echo yes || echo no); kill $w1 2>/dev/null; wait $w1 2>/dev/null; $WS -k
echo "first watcher still running during the second: $alive; lock_taken_over in the ledger: $(grep -c lock_taken_over $L/rx/.local/rx_agent_ledger.jsonl)"
[ "$alive" = yes ] && grep -q lock_taken_over $L/rx/.local/rx_agent_ledger.jsonl && {
  echo "broken: a second watcher took the running watcher's lock over as stale (its PID called dead); two watchers ran at once"; exit 0; }
echo held; exit 1
