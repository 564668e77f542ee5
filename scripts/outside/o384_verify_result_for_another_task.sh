#!/bin/bash
# o384: a peer on `rx-node` copies LAB1's published result of task M1 as the result of TG1, a task the main PC
# wrote for LAB2 only (`task new --node LAB2`), keeping every hash, the Markdown's JSON hash and LOG_META
# consistent. The result's own `source_commit` holds task M1, not TG1, and TG1 names only LAB2; yet
# `results verify TG1` printed OK and exited 0. The main PC's clone holds the task text at that commit: the
# result must answer the task it is filed under, and come from a node the task was for.
source "$(dirname "$0")/lib.sh"
newlab o384
policy; rxn node set-name LAB1 >/dev/null
{ hdr M1 NO NO NO; printf '\n# manual\n\nread\n'; } | post; approve
rxn mark-completed M1 --status FAIL --note "clock off" >/dev/null 2>&1; echo "PUBLISH M1" | rxn publish M1 --push >/dev/null 2>&1
(cd $L/main && G pull -q origin video-development 2>/dev/null; "$RXN" --repo . task new --id TG1 --title "for LAB2 only" --node LAB2 --force >/dev/null && G add -A && G commit -qm tg1 && G push -q origin video-development) ||
  { echo "cannot play: task new failed"; exit 2; }
G clone -q -b rx-node "$L/origin.git" "$L/peer" 2>/dev/null || { echo "cannot play: M1 was not published"; exit 2; }
peer_copy M1 TG1 "d['task_title']='for LAB2 only'" "md = md.replace('— t', '— for LAB2 only')"
"$RXN" --repo $L/main results verify TG1 > $L/v.out 2>&1; rc=$?
echo "results verify TG1: exit $rc"; cut -c1-220 $L/v.out | head -6
[ $rc = 0 ] && grep -q '^OK' $L/v.out && { echo "broken: LAB1's result of M1, filed as TG1 (a task for LAB2 only), verified OK"; exit 0; }
grep -q 'is task M1, not task TG1' $L/v.out || { echo "cannot play: verify failed for another reason"; exit 2; }
echo held; exit 1
