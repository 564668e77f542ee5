#!/bin/bash
# o26: unclear error, another tool's recording: a WAV whose recorder was stopped before it finalised the header (SDR#,
# GQRX, sox or arecord killed mid-recording leave the data chunk's length 0; a writer streaming to a pipe leaves the
# placeholder 0xFFFFFFFF) is "WAV holds no samples" — for a 400 kB file full of samples — or hound's "data chunk
# length is not a multiple of sample size". `sox --ignore-length` reads the same file. Expected: the header named as
# not finalised, with the bytes there and the fix. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o26.XXXXXX); cd "$L"
python3 - <<'PY'
import numpy as np, struct
n=100000; fs=2000000; t=np.arange(n)/fs
x=0.3*np.exp(2j*np.pi*1e5*t)+0.001*(np.random.randn(n)+1j*np.random.randn(n))
iq=np.empty(2*n,dtype=np.int16); iq[0::2]=(x.real*32767).astype(np.int16); iq[1::2]=(x.imag*32767).astype(np.int16)
fmt=b'fmt '+struct.pack('<IHHIIHH',16,1,2,fs,fs*4,4,16)
for name,dl,rl in [('stopped.wav',0,36),('streamed.wav',0xFFFFFFFF,0xFFFFFFFF)]:
    open(name,'wb').write(b'RIFF'+struct.pack('<I',rl)+b'WAVE'+fmt+b'data'+struct.pack('<I',dl)+iq.tobytes())
PY
bad=""
for f in stopped.wav streamed.wav; do
  "$RXN" analyze $f > o.txt 2>&1; rc=$?; echo "analyze $f ($(stat -c %s $f) bytes): rc=$rc $(head -c 260 o.txt)"
  panics o.txt && bad="$bad $f(panic)"
  grep -q 'not finalised' o.txt || bad="$bad $f"
done
[ -n "$bad" ] && { echo "broken: a WAV whose header was not finalised is called empty / ill-formed without the reason:$bad"; exit 0; }; echo held; exit 1
