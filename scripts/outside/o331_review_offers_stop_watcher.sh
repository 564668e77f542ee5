#!/bin/bash
# o331: the operator defers T1, later opens it with `rxnode review T1`. The review's menu said
# `[A] Approve  [D] Defer  [S] Stop watcher` and [S] said "stopping the watcher": a review has no watcher to stop
# (the watcher, if one runs, goes on). Expected: review's menu offers `[S] Stop review` and [S] says it stops the
# review; the watcher's own menu keeps `[S] Stop watcher`.
. "$(dirname "$0")/lib.sh"
newlab o331; policy; rxn node set-name LAB1 >/dev/null
{ hdr T1 NO NO NO; printf '\n# manual\n\nturn the knob\n'; } | post
echo D | rxn watch --once --interval 0.2 > $L/w.out 2>&1
echo S | rxn review T1 > $L/s.out 2>&1; rs=$?
echo "watch menu:  $(grep -a '^\[A\]' $L/w.out)"
echo "review menu: $(grep -a '^\[A\]' $L/s.out)"
echo "review, [S]: rc=$rs: $(grep -a '^stopping' $L/s.out)"
panics $L/w.out $L/s.out && { echo "broken: a panic"; exit 0; }
grep -aq '\[S\] Stop watcher' $L/w.out || { echo "cannot play: the watcher did not prompt"; exit 2; }
bad=""
grep -aq 'Stop watcher' $L/s.out && bad="$bad review's menu offers [S] Stop watcher;"
grep -aq 'stopping the watcher' $L/s.out && bad="$bad review's [S] says it stops the watcher;"
grep -aq '\[S\] Stop review' $L/s.out || bad="$bad review's menu does not offer [S] Stop review;"
[ -n "$bad" ] && { echo "broken:$bad"; exit 0; }; echo held; exit 1
