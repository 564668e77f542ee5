#!/bin/bash
# o316: a peer on `rx-node` files a result for task FAKE1, a task the main PC never posted. (a) Its
# `source_commit` is a made-up SHA: the main PC's clone does not have that commit, so the check of the task
# the result answers was skipped and `results verify FAKE1` printed OK and exited 0. (b) Its `source_commit`
# is a commit the peer made itself, holding a task FAKE2 at the task path, pushed on a branch of its own
# (`rx-results/ZZ`) that the main PC fetches: the commit is in the clone but on no branch the main PC posts
# tasks to, and the result verified OK too. A result that cannot be tied to a task on the watched branch is
# not verified: verify must fail it, name the commit and say how to fix it.
source "$(dirname "$0")/lib.sh"
newlab o316
policy; rxn node set-name LAB1 >/dev/null
{ hdr M1 NO NO NO; printf '\n# manual\n\nread\n'; } | post; approve
rxn mark-completed M1 --status FAIL --note "clock off" >/dev/null 2>&1; echo "PUBLISH M1" | rxn publish M1 --push >/dev/null 2>&1
G clone -q -b rx-node "$L/origin.git" "$L/peer" 2>/dev/null || { echo "cannot play: M1 was not published"; exit 2; }
peer_copy M1 FAKE1 "d['source_commit']='1234567890abcdef1234567890abcdef12345678'" ""
# (b): the peer's own commit holding task FAKE2, on a branch the main PC fetches.
(cd $L/peer && G checkout -q --orphan zz && G rm -rqf . && mkdir -p docs/handoff &&
  { hdr FAKE2 NO NO NO; printf '\n# manual\n\nread\n'; } > docs/handoff/NEXT_RX_TASK.md && G add -A && G commit -qm fake &&
  G push -q origin HEAD:refs/heads/rx-results/ZZ && G checkout -q rx-node) || { echo "cannot play: peer branch"; exit 2; }
FAKE=$(git -C $L/peer rev-parse zz)
peer_copy M1 FAKE2 "d['source_commit']='$FAKE'" ""
broken=""
for id in FAKE1 FAKE2; do
  "$RXN" --repo $L/main results verify $id > $L/v.$id 2>&1; rc=$?
  echo "results verify $id: exit $rc"; cut -c1-260 $L/v.$id | head -5
  panics $L/v.$id && broken="$broken; verify $id panicked"
  [ $rc = 0 ] && grep -q '^OK' $L/v.$id && broken="$broken; $id (a task never posted, source_commit $(grep -o '"source_commit": "[0-9a-f]*"' $L/peer/rx-results/$id/LAB1/RX_RESULT.json | cut -c19-30)…) verified OK"
done
"$RXN" --repo $L/main results --no-fetch > $L/list.out 2>&1; echo "results:"; cut -c1-200 $L/list.out | head -6
[ -n "$broken" ] && { echo "broken: ${broken#; }"; exit 0; }
grep -q 'is not in this clone' $L/v.FAKE1 && grep -q 'is on no branch' $L/v.FAKE2 || { echo "cannot play: verify failed for another reason"; exit 2; }
grep -q 'FAKE1.*not tied\|not tied.*FAKE1' $L/list.out || { echo "broken: verify fails FAKE1 but the listing does not flag it"; exit 0; }
echo held; exit 1
