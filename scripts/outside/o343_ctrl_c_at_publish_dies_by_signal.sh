#!/bin/bash
# o343: the operator runs `rxnode publish T1`, reads what would be published and presses Ctrl-C at the
# `PUBLISH T1` prompt (SIGINT, through a pty). The process died of the signal: no word of what happened, no ledger
# line, an exit status outside docs/protocol.md's 0/1/2/3 (130 in a shell). Expected: a refusal like any other
# answer that is not the phrase (exit 3, a `refused` ledger line naming the interrupt), nothing committed, and the
# next publish goes ahead.
. "$(dirname "$0")/lib.sh"
newlab o343; policy; rxn node set-name LAB1 >/dev/null
{ hdr T1 NO NO NO | sed 's/^ALLOW_PUSH = .*/ALLOW_PUSH = RX_RESULT_ONLY/'; printf '\n# manual\n\nread the clock\n'; } | post; approve
rxn mark-completed T1 --status PASS --note "clock read" >/dev/null 2>&1
pty_interrupt "to go ahead" "$RXN" --repo "$L/rx" publish T1 > $L/p.out 2>&1
ex=$(grep -a '^EXIT' $L/p.out | cut -d' ' -f2-)
led=$(grep -a '"event":"refused","task_id":"T1"' $L/rx/.local/rx_agent_ledger.jsonl | grep -c publish)
ref=$(git -C $L/rx rev-parse -q --verify refs/heads/rx-node || echo none)
echo "PUBLISH T1" | rxn publish T1 > $L/n.out 2>&1; n=$?
echo "Ctrl-C at PUBLISH: exit $ex; said: $(grep -a 'refused\|interrupt' $L/p.out | head -1 | cut -c1-200)"
echo "refused publish lines for T1 in the ledger: $led; local rx-node after: $ref; next publish: rc=$n"
panics $L/p.out $L/n.out && { echo "broken: a panic"; exit 0; }
grep -aq 'to go ahead' $L/p.out || { echo "cannot play: the prompt never came"; exit 2; }
bad=""
[ "$ex" = 3 ] || bad="$bad Ctrl-C at the prompt ended publish with exit $ex, not a refusal (3);"
[ "$led" -ge 1 ] || bad="$bad the ledger has no line for the abandoned publication;"
[ "$ref" = none ] || bad="$bad a commit was made ($ref);"
[ "$n" = 0 ] || bad="$bad the next publish exited $n;"
[ -n "$bad" ] && { echo "broken:$bad"; exit 0; }; echo held; exit 1
