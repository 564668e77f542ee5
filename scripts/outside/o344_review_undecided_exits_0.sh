#!/bin/bash
# o344: `rxnode review T1` is left without a decision — [S], Enter at every prompt then end of input, Ctrl-C at
# the prompt. Nothing was decided, yet the review exited 0, so `rxnode review T1 && rxnode run T1` went on as if
# T1 had been approved. Expected: exit 3 each time (as `run`'s AUTHORIZE and `publish`'s PUBLISH prompts left
# unanswered), a message naming the status T1 keeps and how to decide it, and T1 still deferred.
. "$(dirname "$0")/lib.sh"
newlab o344; policy; rxn node set-name LAB1 >/dev/null
{ hdr T1 NO NO NO; printf '\n# manual\n\nturn the knob\n'; } | post
echo D | rxn watch --once --interval 0.2 > $L/w.out 2>&1
echo S | rxn review T1 > $L/s.out 2>&1; rs=$?
printf '\n\n\n' | rxn review T1 > $L/e.out 2>&1; re=$?
pty_interrupt '[A] Approve' "$RXN" --repo "$L/rx" review T1 > $L/c.out 2>&1
rc=$(sed -n 's/^EXIT //p' $L/c.out)
st=$(rxn status | grep -aE '^(pending|deferred|approved):' | tr -s ' ' | tr '\n' ' ')
echo "review, [S]: exit $rs: $(grep -a 'not decided' $L/s.out)"
echo "review, Enter x3 then end of input: exit $re: $(grep -a 'not decided' $L/e.out)"
echo "review, Ctrl-C: exit $rc: $(grep -a 'not decided' $L/c.out | tr -d '\r')"
echo "status: $st"
panics $L/w.out $L/s.out $L/e.out $L/c.out && { echo "broken: a panic"; exit 0; }
[[ "$st" == *"deferred: T1"* ]] || { echo "broken: T1 is not deferred after reviews that decided nothing ($st)"; exit 0; }
bad=""
[ "$rs" = 3 ] || bad="$bad [S] exits $rs;"
[ "$re" = 3 ] || bad="$bad end of input exits $re;"
[ "$rc" = 3 ] || bad="$bad Ctrl-C exits $rc;"
for f in s e c; do grep -aq 'it is still deferred' $L/$f.out || bad="$bad the review ($f) does not name the status T1 keeps;"; done
[ -n "$bad" ] && { echo "broken: a review that decided nothing:$bad"; exit 0; }; echo held; exit 1
