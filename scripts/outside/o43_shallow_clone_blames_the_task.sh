#!/bin/bash
# o43: the operator clones the lab repository with `git clone --depth 1` (common on lab laptops, and
# docs/decisions.md says it is supported) while a task is already posted. The watcher rejects the task
# with a claim about the main PC's task that is false — "EXPECTED_HEAD … is not a strict ancestor of the
# task commit" — when it is the task commit's parent, cut off by the shallow boundary. Nothing names the
# shallow clone or the fix (`git fetch --unshallow`); after unshallowing the task stays rejected with the
# same false reason. Refusing is right (never assume ancestry); the reason must say why.
source "$(dirname "$0")/lib.sh"
newlab o43
{ hdr SHALLOW1 YES YES NO; plan '{"op":"rx_capture","device":"driver=rxsim","frequency_hz":100e6,"sample_rate_hz":2e6,"gain_db":20,"duration_s":0.2}'; } | post
rm -rf "$L/rx"; G clone -q --depth 1 -b video-development "file://$L/origin.git" "$L/rx" 2>/dev/null; mkdir -p "$L/rx/.local"; policy
approve; grep -a 'rejected' $L/watch.out | cut -c1-260
echo "EXPECTED_HEAD is the task commit's parent: $(git -C $L/main rev-parse HEAD~1 | cut -c1-12) (this clone is shallow: $(test -f $L/rx/.git/shallow && echo yes))"
grep -a 'rejected' $L/watch.out | grep -q 'not a strict ancestor' && ! grep -aq 'shallow' $L/watch.out && {
  echo "broken: a shallow clone's missing history is reported as the main PC's task being wrong"; exit 0; }
grep -aq 'rejected' $L/watch.out || { echo "broken: the task's ancestry was not refused in a shallow clone"; exit 0; }
echo held; exit 1
