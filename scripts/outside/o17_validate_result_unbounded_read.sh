#!/bin/bash
# o17: unbounded read: `rxnode validate-result PATH` bounds a regular file by its size ("3221225472 bytes; a result is at
# most 16777216") but reads a character device or a FIFO to the end: `validate-result /dev/zero` grows past 7 GB of RSS
# in 20 s (until the OOM killer or our timeout), and 300 MB through a FIFO become 300 MB of RSS. Every other file
# argument (`validate`, `task new --plan/--body`, `watch --task-file`) refuses "not a regular file". Expected the same
# here, or a read bounded at the 16 MiB limit. Exit 0 = defect present. (Run with a memory cap: ulimit -v 2 GB here.)
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o17.XXXXXX); cd "$L"
"$RXN" validate /dev/zero 2>&1 | head -1 | sed 's/^/validate \/dev\/zero: /'
( ulimit -v 2000000; /usr/bin/time -f "%e s wall, %M KB max RSS" timeout 20 "$RXN" validate-result /dev/zero > out.txt 2>&1; echo "rc=$?" >> out.txt )
echo "validate-result /dev/zero: $(tail -3 out.txt | tr '\n' ' ' | cut -c1-250)"
kb=$(grep -o '[0-9]* KB max RSS' out.txt | cut -d' ' -f1)
[ "${kb:-0}" -gt 500000 ] && { echo "broken: validate-result reads /dev/zero without bound (${kb} KB before it was stopped)"; exit 0; }; echo held; exit 1
