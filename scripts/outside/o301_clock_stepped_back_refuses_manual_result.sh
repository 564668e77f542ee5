#!/bin/bash
# o301: the laptop booted with its clock an hour ahead; the operator approved a manual task, then NTP set the clock
# right (a step back of one hour), and the operator typed `rxnode mark-completed M1 --status PASS --note …`.
# The result was refused — "the result would not validate, nothing was changed: timeline: completed_at is before
# started_at" (exit 2), every time, so the task could never carry the operator's PASS: it stayed approved and
# `publish` sent the approval's NOT RUN placeholder. Expected: the PASS is kept; the unknown start is said in the
# result's errors. The clock ahead is played with faketime (+1h) for the approval only.
source "$(dirname "$0")/lib.sh"
command -v faketime >/dev/null || { echo "cannot play: faketime is not installed"; exit 2; }
newlab o301; policy; rxn node set-name LAB1 >/dev/null
{ hdr M1 NO NO NO; printf '\n# manual\n\nturn the knob\n'; } | post
echo A | faketime -f +1h "$RXN" --repo "$L/rx" watch --once --interval 0.2 > $L/w.out 2>&1
grep -aq 'approved M1' $L/w.out || { echo "cannot play: M1 was not approved"; cat $L/w.out; exit 2; }
echo "approved at (clock +1 h): $(python3 -c "import json; print(json.load(open('$L/rx/.local/rx_agent_outbox/M1/RX_RESULT.json'))['approval']['at'])"), now $(date -u +%FT%T)"
rxn mark-completed M1 --status PASS --note "knob turned" > $L/mc.out 2>&1; mc=$?
echo "mark-completed (clock set right): rc=$mc $(head -c 300 $L/mc.out)"
echo "PUBLISH M1" | rxn publish M1 > $L/pub.out 2>&1; echo "publish: rc=$? $(grep -a '^Publish\|error' $L/pub.out | head -1 | cut -c1-160)"
res=$(python3 -c "import json; d=json.load(open('$L/rx/.local/rx_agent_outbox/M1/RX_RESULT.json')); print(d['status'], d['timeline']['started_at'], d['timeline']['completed_at'], d['errors'])" 2>&1)
echo "M1's result: $res"
rxn validate-result M1 > $L/vr.out 2>&1; vr=$?; echo "validate-result: rc=$vr $(head -1 $L/vr.out | cut -c1-160)"
panics $L/*.out && { echo "broken: a panic"; exit 0; }
bad=""
[ "$mc" = 0 ] || bad="$bad mark-completed --status PASS refused (rc=$mc);"
[[ "$res" == PASS* ]] || bad="$bad M1's result is not the operator's PASS;"
grep -aq 'status NOT RUN' $L/pub.out && bad="$bad publish offered the NOT RUN placeholder;"
[ "$vr" = 0 ] || bad="$bad the result does not validate;"
[[ "$res" == *"stepped back"* ]] || bad="$bad the result does not say the clock was stepped back;"
[ -n "$bad" ] && { echo "broken:$bad"; exit 0; }; echo held; exit 1
