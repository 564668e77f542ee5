#!/bin/bash
# o342: `rxnode run R1` of an approved RED tone asks `AUTHORIZE RF TX`; the operator changes their mind and presses
# Ctrl-C (SIGINT at the prompt, through a pty). The process died of the signal: no message, no ledger line, and its
# run lock stayed in .local/, so the next `run` greeted the operator with "taking over stale lock … its PID is dead",
# as after a crash. Expected: a refusal like any other answer that is not the phrase (exit 3, a `refused` ledger
# line naming the interrupt), no lock left, R1 still approved, and the next run without a stale-lock warning.
. "$(dirname "$0")/lib.sh"
newlab o342; policy; rxn node set-name LAB1 >/dev/null
{ hdr R1 YES NO YES; plan '{"op":"tx_tone","device":"driver=rxsim,serial=tx","frequency_hz":433.92e6,"sample_rate_hz":2e6,"tone_offset_hz":5e4,"gain_db":0,"duration_s":0.3}'; } | post; approve
pty_interrupt "to authorize" "$RXN" --repo "$L/rx" --sim run R1 > $L/p.out 2>&1
ex=$(grep -a '^EXIT' $L/p.out | cut -d' ' -f2-)
lock=$([ -e $L/rx/.local/rxnode-run.lock ] && echo "left behind" || echo "none")
led=$(grep -ac '"event":"refused","task_id":"R1"' $L/rx/.local/rx_agent_ledger.jsonl)
st=$(rxn status | grep -aE '^approved:' | tr -s ' ')
echo 'AUTHORIZE RF TX' | rxn --sim run R1 > $L/r.out 2>&1; r=$?
echo "Ctrl-C at AUTHORIZE: exit $ex; said: $(grep -a 'refused\|interrupt' $L/p.out | head -1 | cut -c1-200)"
echo "run lock after: $lock; refused lines for R1 in the ledger: $led; $st"
echo "next run: rc=$r; $(grep -a 'stale' $L/r.out | cut -c1-200)"
panics $L/p.out $L/r.out && { echo "broken: a panic"; exit 0; }
grep -aq 'to authorize' $L/p.out || { echo "cannot play: the prompt never came"; exit 2; }
bad=""
[ "$ex" = 3 ] || bad="$bad Ctrl-C at the prompt ended the run with exit $ex, not a refusal (3);"
[ "$lock" = none ] || bad="$bad the run lock was left behind;"
[ "$led" -ge 1 ] || bad="$bad the ledger has no line for the abandoned authorization;"
grep -aq 'stale' $L/r.out && bad="$bad the next run took over a stale lock;"
[ -n "$bad" ] && { echo "broken:$bad"; exit 0; }; echo held; exit 1
