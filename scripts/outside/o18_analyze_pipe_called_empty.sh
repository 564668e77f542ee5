#!/bin/bash
# o18: wrong statement in an error: `analyze` given a pipe or FIFO that carries 1.6 MB of samples says
# "empty file (0 bytes)" (it takes the size from the metadata, which is 0 for a pipe), exit 2. The docs show live
# streaming out of `capture --record -` / a FIFO to other programs, so piping into `analyze` is a natural next step.
# Expected: read it, or "not a regular file: analyze needs a file it can read twice" — never "empty". Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o18.XXXXXX); cd "$L"
python3 -c "import numpy as np; t=np.arange(400000)/2e6; (0.1*np.exp(2j*np.pi*1e5*t)).astype(np.complex64).tofile('tone.cfile')"
"$RXN" analyze tone.cfile -r 2M > file.out 2>&1; echo "as a file: rc=$? $(grep samples file.out)"
cat tone.cfile | "$RXN" analyze /dev/stdin -F cf32 -r 2M > pipe.out 2>&1; rc=$?; echo "through a pipe ($(stat -c %s tone.cfile) bytes sent): rc=$rc $(cat pipe.out)"
grep -q 'empty file (0 bytes)' pipe.out && { echo "broken: a pipe carrying samples is called an 'empty file (0 bytes)'"; exit 0; }; echo held; exit 1
