#!/bin/bash
# o61: the disk holding the outbox fills during a run (a 64 KiB tmpfs on the task's outbox, filled; needs root).
# The capture PASSed, but its result files could not be written: nothing of the measurement was printed, the advice
# was `rxnode state rebuild` (which cannot bring a result back: it recovers decisions, not measurements), and the
# approval's `NOT RUN` placeholder stayed in the outbox, so `publish` sent "DF (NOT RUN)" for a task that ran and
# passed. Expected: the result is printed before the error (its only copy), the advice says what can be done (keep
# it, free space, a new TASK_ID), and no stale result is left for publish to send.
source "$(dirname "$0")/lib.sh"
newlab o61; policy; rxn node set-name LAB1 >/dev/null
{ hdr DF YES YES NO; plan '{"op":"rx_capture","device":"driver=rxsim,serial=o61","frequency_hz":100e6,"sample_rate_hz":1e6,"gain_db":20,"duration_s":0.3}'; } | post; approve
O=$L/rx/.local/rx_agent_outbox/DF; cp -a $O $L/keep
mount -t tmpfs -o size=64k tmpfs $O 2>/dev/null || { echo "cannot play: a tmpfs mount needs root"; exit 2; }
trap 'umount $O 2>/dev/null' EXIT
cp -a $L/keep/. $O/; dd if=/dev/zero of=$O/fill bs=4k count=100 2>/dev/null
rxn --sim run DF > $L/run.out 2> $L/run.err; rc=$?; rm -f $O/fill
echo "run rc=$rc; stdout: $(head -c 200 $L/run.out | tr '\n' ' ')"; grep -a 'error' $L/run.err | cut -c1-300
echo "PUBLISH DF" | rxn publish DF > $L/pub.out 2>&1; echo "publish: $(tail -2 $L/pub.out | tr '\n' ' ' | cut -c1-200)"
sent=$(git -C $L/rx log --format=%s rx-node 2>/dev/null | head -1)
panics $L/run.err $L/pub.out && { echo "broken: a panic"; exit 0; }
bad=""
grep -q 'DF: PASS' $L/run.out || bad="$bad the measurement was not printed;"
grep -q 'state rebuild' $L/run.err && bad="$bad the advice names state rebuild;"
[[ "$sent" == *"NOT RUN"* ]] && bad="$bad publish sent '$sent' for a run that PASSed;"
[ -n "$bad" ] && { echo "broken:$bad"; exit 0; }; echo held; exit 1
