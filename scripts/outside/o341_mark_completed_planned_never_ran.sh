#!/bin/bash
# o341: the operator approves a task with an rx-plan (one rxsim capture) and, by habit from manual tasks, types
# `rxnode mark-completed P1` before running it. It was marked completed with the approval's NOT RUN placeholder
# (exit 0), and `rxnode run P1` then refused "already run to completion": the capture never ran and the operator
# cannot run it again without editing files (`--status PASS` for it is refused, exit 2, as before). Expected:
# `mark-completed P1` refused (exit 3, naming `rxnode run P1`); P1 stays approved and its run runs it.
. "$(dirname "$0")/lib.sh"
newlab o341; policy; rxn node set-name LAB1 >/dev/null
{ hdr P1 YES YES NO; plan '{"op":"rx_capture","device":"driver=rxsim","frequency_hz":100e6,"sample_rate_hz":2e6,"gain_db":20,"duration_s":0.2}'; } | post; approve
rxn mark-completed P1 --status PASS --note "done" > $L/ms.out 2>&1; ms=$?
rxn mark-completed P1 > $L/m.out 2>&1; m=$?
st=$(rxn status | grep -aE '^(approved|completed):' | tr -s ' ' | tr '\n' ' ')
rxn --sim run P1 > $L/r.out 2>&1; r=$?
echo "mark-completed --status PASS: rc=$ms: $(head -c 220 $L/ms.out)"
echo "mark-completed: rc=$m: $(head -c 220 $L/m.out)"
echo "status after: $st"
echo "run P1: rc=$r: $(grep -a 'P1\|refused' $L/r.out | head -2 | cut -c1-160 | tr '\n' ' ')"
echo "result: $(grep -ao '"status": "[A-Z ]*"' $L/rx/.local/rx_agent_outbox/P1/RX_RESULT.json | head -1)"
panics $L/ms.out $L/m.out $L/r.out && { echo "broken: a panic"; exit 0; }
bad=""
[ "$ms" = 0 ] && bad="$bad mark-completed --status PASS of a task with a plan was accepted;"
[ "$m" = 3 ] || bad="$bad mark-completed of a planned task that never ran exited $m, not 3;"
[ "$m" = 0 ] && bad="$bad mark-completed of a planned task that never ran closed it (exit 0);"
[ "$r" = 0 ] || bad="$bad run P1 then exited $r (the capture never ran);"
[ -n "$bad" ] && { echo "broken:$bad"; exit 0; }; echo held; exit 1
