#!/bin/bash
# o5: unclear error: a WAV whose header says 0 samples/s is refused with "--sample-rate-hz 0 must be a finite number > 0",
# naming a flag the user never gave; the value came from the file's fmt chunk (SigMF's core:sample_rate -2e6 is named
# as the key it is). Expected: the file and its header field named (e.g. "x.wav: WAV header sample rate 0 …").
# Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o5.XXXXXX); cd "$L"
python3 -c "
import struct, numpy as np
pcm=(np.random.randn(200000)*1000).astype('<i2').tobytes()
open('rate0.wav','wb').write(b'RIFF'+struct.pack('<I',36+len(pcm))+b'WAVE'+b'fmt '+struct.pack('<IHHIIHH',16,1,2,0,0,4,16)+b'data'+struct.pack('<I',len(pcm))+pcm)"
"$RXN" analyze rate0.wav > out.txt 2>&1; rc=$?; echo "rxnode analyze rate0.wav (no flags): rc=$rc: $(cat out.txt)"
"$RXN" --json analyze rate0.wav 2>&1 | sed 's/^/--json: /'
grep -q -- '--sample-rate-hz' out.txt && { echo "broken: the error blames --sample-rate-hz, which was not given; the WAV header is not named"; exit 0; }; echo held; exit 1
