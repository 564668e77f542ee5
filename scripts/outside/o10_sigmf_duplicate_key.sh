#!/bin/bash
# o10: wrong number from an ambiguous recording: a SigMF meta holding "core:sample_rate" twice (2e6, then 1e6) is read
# silently with the last value: every frequency and duration in the report is then scaled by 2 (a 100 kHz tone reported at
# 50 kHz, 0.1 s as 0.2 s), exit 0. rxnode refuses duplicate keys everywhere it reads hostile JSON (plans, results: "JSON
# parsers disagree on which one wins"); a meta can be as ambiguous. Expected: refused (exit 2) naming the key.
# Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o10.XXXXXX); cd "$L"
python3 -c "
import numpy as np
fs=2e6; n=200000; t=np.arange(n)/fs
(0.1*np.exp(2j*np.pi*1e5*t)).astype(np.complex64).tofile('dup.sigmf-data')
open('dup.sigmf-meta','w').write('{\"global\":{\"core:datatype\":\"cf32_le\",\"core:sample_rate\":2000000.0,\"core:sample_rate\":1000000.0,\"core:version\":\"1.2.0\"},\"captures\":[{\"core:sample_start\":0,\"core:frequency\":915000000.0}],\"annotations\":[]}')"
"$RXN" analyze dup.sigmf-meta > out.txt 2>&1; rc=$?; echo "analyze rc=$rc:"; grep -E 'samples|peaks|error' out.txt
[ $rc -eq 0 ] && { echo "broken: a meta with core:sample_rate twice is analysed with one of them, silently"; exit 0; }; echo held; exit 1
