#!/bin/bash
# o250: the main PC pushes a commit whose docs/handoff/ folder is an 18 MiB tree (half a million entries of one empty
# blob: a few hundred KiB pushed) while the root tree stays small. Every poll failed looking the task path up in it and
# retried for ever: no ledger line, and `status` kept showing the last good poll ("examined …, 1 new task(s) queued").
# Witness: the looping watcher's stderr, `status`'s last poll and the ledger's `refused` lines.
. "$(dirname "$0")/lib.sh"
newlab bigfolder
policy
{ hdr BF1 NO NO NO; } | post
rxn watch --once --no-prompt </dev/null >$L/poll0.out 2>&1
cd $L/main
E=$(G hash-object -w --stdin </dev/null)
{ hdr BF2 NO NO NO; } > $L/task.md; T=$(G hash-object -w $L/task.md)
SUB=$( { printf '100644 blob %s\tNEXT_RX_TASK.md\n' $T; python3 -c "
import sys
for i in range(500000): sys.stdout.write('100644 blob $E\tf%07d\n' % i)"; } | G mktree)
DOCS=$(printf '040000 tree %s\thandoff\n' $SUB | G mktree)
ROOT=$( { G ls-tree HEAD | grep -v '	docs$'; printf '040000 tree %s\tdocs\n' $DOCS; } | G mktree)
C=$(G commit-tree $ROOT -p HEAD -m 'post BF2'); G push -q origin $C:video-development
cd - >/dev/null
echo "commit $C: docs/handoff/ is tree $SUB of $(git -C $L/main cat-file -s $SUB) bytes"
timeout 5 "$RXN" --repo $L/rx watch --no-prompt --interval 0.5 </dev/null >$L/poll.out 2>&1
echo "watcher (5 s): $(grep -ac "$SUB" $L/poll.out) poll(s) naming the folder's tree; first: $(grep -a -m1 "$SUB" $L/poll.out | cut -c1-240)"
LP=$(rxn status 2>&1 | grep -a 'last poll'); echo "status: $LP"
N=$(grep -a '"event":"refused"' $L/rx/.local/rx_agent_ledger.jsonl | grep -ac "$C"); echo "ledger: $N refused line(s) naming $C"
panics $L/poll.out && { echo "broken: a panic"; exit 0; }
grep -aq "$SUB" $L/poll.out || { echo "broken: the watcher never named the oversized folder"; exit 0; }
echo "$LP" | grep -q 'refused' || { echo "broken: status shows the last good poll while every poll fails on the oversized folder of $C"; exit 0; }
[ "$N" = 1 ] || { echo "broken: $N ledger lines refuse $C (want 1)"; exit 0; }
echo held; exit 1
