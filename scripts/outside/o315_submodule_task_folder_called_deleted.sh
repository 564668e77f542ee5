#!/bin/bash
# o315: a task is pending; the main PC replaces the folder docs/handoff by a submodule (a gitlink at docs/handoff).
# The task file is gone as by a deletion, and the pending task is withdrawn — but the node said the main PC "deleted"
# docs/handoff/NEXT_RX_TASK.md, never that the folder holding it became a submodule. Witness: what `watch --once` says.
. "$(dirname "$0")/lib.sh"
newlab gitlinkfolder
policy
rxn watch --once --no-prompt </dev/null >$L/poll0.out 2>&1
post < <(hdr GL1 NO NO NO; printf '\n# Task\n\nmanual\n')
rxn watch --once --no-prompt </dev/null >$L/poll1.out 2>&1
(cd $L/main && G rm -rq docs/handoff && G update-index --add --cacheinfo 160000,$BASE,docs/handoff \
  && G commit -qm "handoff is a submodule" && G push -q origin video-development)
echo "origin's docs/handoff: $(git -C $L/origin.git ls-tree video-development docs/handoff)"
rxn watch --once --no-prompt </dev/null >$L/poll.out 2>&1; rc=$?
echo "watch --once: rc=$rc"; grep -a 'GL1\|NEXT_RX_TASK' $L/poll.out | cut -c1-260
state=$(rxn status 2>&1 | grep -a '^withdrawn:')
echo "$state"
panics $L/poll.out && { echo "broken: a panic"; exit 0; }
echo "$state" | grep -q GL1 || { echo "broken: the pending task was not withdrawn (rc=$rc)"; exit 0; }
grep -aq 'docs/handoff is now a submodule' $L/poll.out || { echo "broken: the withdrawal says the task file was deleted, not that its folder became a submodule"; exit 0; }
echo held; exit 1
