#!/bin/bash
# o21: hang: a FIFO named as a recording blocks `rxnode analyze` for ever at open: a `.sigmf-meta` that is a FIFO (or
# a good meta whose `.sigmf-data` is one, or a `.wav` / `.cf32` FIFO) with no writer leaves analyze waiting in open(2),
# no output, until killed. Files named as a task, a result or the policy were looked at (stat) before the open, but a
# FIFO swapped in after the look blocked the same way. Expected: every file rxnode reads is opened without blocking
# and refused when it is not a regular file ("not a regular file: a pipe or FIFO"), exit 2. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o21.XXXXXX); cd "$L"
mkfifo m.sigmf-meta p.sigmf-data w.wav r.cf32 task.md RX_RESULT.json policy.json
printf '{"global":{"core:datatype":"cf32_le","core:sample_rate":2e6,"core:version":"1.2.0"},"captures":[{"core:sample_start":0,"core:frequency":1e8}],"annotations":[]}' > p.sigmf-meta
hung=""
for a in "analyze m.sigmf-meta" "analyze p.sigmf-meta" "analyze w.wav" "analyze r.cf32 -r 2M" \
         "validate task.md" "validate-result RX_RESULT.json" "--policy policy.json status"; do
  timeout 10 "$RXN" $a > out.txt 2>&1; rc=$?
  echo "rxnode $a: rc=$rc $(head -c 160 out.txt | tr '\n' ' ')"
  [ $rc -eq 124 ] && hung="$hung '$a'"
  panics out.txt && hung="$hung '$a'(panic)"
done
[ -n "$hung" ] && { echo "broken: blocked on a FIFO for 10 s (killed):$hung"; exit 0; }; echo held; exit 1
