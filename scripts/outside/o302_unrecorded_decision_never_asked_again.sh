#!/bin/bash
# o302: a looping `rxnode watch` shows task T1; the operator types A; the approval cannot be written (here the outbox
# folder refuses new entries, `chattr +i`; a full disk does the same). The watcher said "cannot show pending task T1"
# and never asked again: T1 stayed pending, unasked, until the watcher was restarted, also once the folder could be
# written again — for a watcher that runs for weeks, a task that silently waits; `watch --once` exited 0 after it.
# Expected: the same watcher offers T1 again at a later poll, and the second A approves it; `--once` exits 1.
# Needs root (chattr).
source "$(dirname "$0")/lib.sh"
newlab o302; policy; rxn node set-name LAB1 >/dev/null
{ hdr T1 NO NO NO; printf '\n# manual\n\nturn the knob\n'; } | post
O=$L/rx/.local/rx_agent_outbox; mkdir -p $O
chattr +i $O 2>/dev/null || { echo "cannot play: chattr +i failed (root on ext4 needed)"; exit 2; }
(echo A; for i in $(seq 60); do [ -e $L/go ] && { echo A; break; }; sleep 0.1; done; sleep 3) | "$RXN" --repo "$L/rx" watch --interval 0.3 > $L/w.out 2>&1 & P=$!
for i in $(seq 100); do grep -aq 'T1.*rx_agent_outbox' $L/w.out && break; sleep 0.1; done
chattr -i $O; sleep 0.5; touch $L/go
for i in $(seq 50); do [ -d $O/T1 ] && break; sleep 0.1; done; sleep 0.3
kill -TERM $P 2>/dev/null; wait $P 2>/dev/null
echo "watcher: $(grep -a 'T1\|approved' $L/w.out | grep -av '^ *[0-9]\+  ' | cut -c1-200 | tr '\n' ' ')"
echo "prompts of T1 in the ledger: $(grep -c '"event":"prompted","task_id":"T1"\|"prompted".*"T1"' $L/rx/.local/rx_agent_ledger.jsonl)"
st=$(rxn status | grep -aE '^(pending|approved):' | tr -s ' ' | tr '\n' ' '); echo "status: $st"
{ hdr T2 NO NO NO; printf '\n# manual\n\nturn it back\n'; } | post; chattr +i $O
echo A | rxn watch --once --interval 0.2 > $L/w2.out 2>&1; once=$?; chattr -i $O
echo "watch --once whose approval of T2 could not be written: rc=$once; T2 $(rxn status | grep -aE '^pending:' | tr -s ' ')"
panics $L/w.out $L/w2.out && { echo "broken: a panic"; exit 0; }
grep -aq 'T1.*rx_agent_outbox' $L/w.out || { echo "cannot play: the first approval did not fail"; exit 2; }
bad=""
[[ "$st" == *"approved: T1"* ]] || bad="$bad T1 was never asked again after its approval could not be written ($st);"
[ "$once" = 0 ] && bad="$bad watch --once exited 0 though T2's approval was not recorded;"
[ -n "$bad" ] && { echo "broken:$bad"; exit 0; }; echo held; exit 1
