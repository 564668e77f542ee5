#!/bin/bash
# o347: a second terminal starts `rxnode watch` in a checkout whose watcher already runs. It is refused (exit 3),
# naming the holder, but with no way out: under --json the error's `fix` was null, and the text said nothing of
# how to stop the first. Expected: the fix says to let it finish or stop it ([S] or Ctrl-C in its terminal, the
# service's uninstall), in the text and as the JSON `fix`.
. "$(dirname "$0")/lib.sh"
newlab o347; policy; rxn node set-name LAB1 >/dev/null
(sleep 8 | "$RXN" --repo "$L/rx" watch --interval 0.5 > $L/w1.out 2>&1) &
for _ in $(seq 100); do [ -f "$L/rx/.local/rxnode.lock" ] && break; sleep 0.1; done; sleep 0.5
rxn watch --once < /dev/null > $L/t.out 2>&1; rt=$?
rxn --json watch --once < /dev/null > $L/j.out 2> $L/j.err; rj=$?
fix=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])["error"]["fix"])' $L/j.err 2>&1)
w=$(sed -n 's/.*PID \([0-9]*\) on.*/\1/p' $L/t.out | head -1); [ -n "$w" ] && kill "$w"; wait
echo "second watcher: exit $rt: $(grep -a 'another rxnode' $L/t.out)"
echo "--json: exit $rj: fix: $fix"
panics $L/t.out $L/j.err && { echo "broken: a panic"; exit 0; }
[ "$rt" = 3 ] && grep -aq 'another rxnode holds' $L/t.out || { echo "cannot play: the second watcher was not refused by the first (exit $rt)"; exit 2; }
[ "$fix" = None ] && { echo "broken: the refusal of a second watcher names no fix (JSON fix null)"; exit 0; }
grep -aq 'fix: .*Ctrl-C in its terminal' $L/t.out || { echo "broken: the refusal does not say how to stop the first watcher"; exit 0; }
echo held; exit 1
