#!/bin/bash
# o314: the main PC's .gitattributes gives docs/handoff/ `filter=lfs`, so what reaches the branch is the Git LFS pointer
# (three lines: version, oid, size), not the task. The node refused it as a header missing each of its fields — 13
# issues about TASK_ID, TASK_TITLE, SOURCE_BRANCH … — never saying what the file was or how to fix it. Witness: the
# refusal `watch --once` prints and `validate` of the same file.
. "$(dirname "$0")/lib.sh"
newlab lfspointer
policy
rxn watch --once --no-prompt </dev/null >$L/poll0.out 2>&1
mkdir -p $L/main/docs/handoff
printf 'version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 1234\n' \
  > $L/main/docs/handoff/NEXT_RX_TASK.md
(cd $L/main && G add -A && G commit -qm "task (through LFS)" && G push -q origin video-development)
rxn watch --once --no-prompt </dev/null >$L/poll.out 2>&1; rc=$?
echo "watch --once: rc=$rc"; grep -a 'NEXT_RX_TASK' $L/poll.out | cut -c1-330
"$RXN" validate $L/main/docs/handoff/NEXT_RX_TASK.md >$L/validate.out 2>&1; vrc=$?
echo "validate: rc=$vrc, $(grep -ac . $L/validate.out) line(s): $(head -2 $L/validate.out | cut -c1-200 | tr '\n' ' ')"
panics $L/poll.out $L/validate.out && { echo "broken: a panic"; exit 0; }
grep -aq '"event":"refused"' $L/rx/.local/rx_agent_ledger.jsonl || { echo "broken: the pointer was not refused"; exit 0; }
grep -aq 'Git LFS pointer' $L/poll.out || { echo "broken: the refusal names missing header fields, not the LFS pointer it is"; exit 0; }
grep -aq 'Git LFS pointer' $L/validate.out || { echo "broken: validate does not name the LFS pointer"; exit 0; }
[ $vrc = 0 ] && { echo "broken: validate accepted the pointer"; exit 0; }
echo held; exit 1
