#!/bin/bash
# o340: the operator defers T1, later opens it with `rxnode review T1` and leaves without deciding ([S], or end of
# input, or Ctrl-C). The review said "T1 stays pending and is shown at the next start": T1 stays deferred, and a
# watcher never shows a deferred task again — the operator waits for a prompt that never comes. Expected: the
# message names the status T1 keeps (deferred) and how it is decided (`rxnode review T1`).
. "$(dirname "$0")/lib.sh"
newlab o340; policy; rxn node set-name LAB1 >/dev/null
{ hdr T1 NO NO NO; printf '\n# manual\n\nturn the knob\n'; } | post
echo D | rxn watch --once --interval 0.2 > $L/w.out 2>&1
echo S | rxn review T1 > $L/s.out 2>&1; rs=$?
rxn review T1 < /dev/null > $L/e.out 2>&1; re=$?
st=$(rxn status | grep -aE '^(pending|deferred):' | tr -s ' ' | tr '\n' ' ')
echo "review, [S]: rc=$rs: $(grep -a 'stays' $L/s.out)"
echo "review, end of input: rc=$re: $(grep -a 'stays' $L/e.out)"
echo "status: $st"
panics $L/w.out $L/s.out $L/e.out && { echo "broken: a panic"; exit 0; }
[[ "$st" == *"deferred: T1"* ]] || { echo "cannot play: T1 is not deferred ($st)"; exit 2; }
bad=""
for f in s e; do
  grep -aq 'T1 stays pending' $L/$f.out && bad="$bad the review ($f) says T1 stays pending, but it is deferred;"
  grep -aq 'T1 stays deferred' $L/$f.out || bad="$bad the review ($f) does not say T1 stays deferred;"
done
[ -n "$bad" ] && { echo "broken:$bad"; exit 0; }; echo held; exit 1
