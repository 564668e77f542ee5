#!/bin/bash
# o162: one rtl_sdr recording (unsigned 8-bit I/Q, the dongle's idle codes 127 and 128 at random) read through every
# reader rxnode has for unsigned bytes: raw `.cu8`, a SigMF `cu8` pair, an 8-bit WAV, an 8-bit RF64 WAV (`analyze`),
# and rxsim's `replay=` (`capture`). The 8-bit WAV was read as (x - 128)/128 (-42.14 dBFS, a DC of -0.5 counts), the
# replay as (x - 127.5)/127.5 (-45.12 dBFS), the others as (x - 127.5)/128 (-45.15 dBFS). Expected: one rule, rtl_sdr's
# own ((x - 127.5)/128, every sample +-0.5/128 per rail), the mean power of each path what numpy makes of the bytes.
source "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o162.XXXXXX); cd "$L"; export HOME=$L/home; mkdir -p "$HOME"
python3 - > ref.txt <<'PY'
import numpy as np, struct, json
n=1<<19; fs=2000000
u=np.random.default_rng(7).integers(127,129,size=2*n).astype(np.uint8); d=u.tobytes()
open('rtl.cu8','wb').write(d); open('rtl.sigmf-data','wb').write(d)
json.dump({"global":{"core:datatype":"cu8","core:sample_rate":fs,"core:version":"1.2.0"},"captures":[{"core:sample_start":0,"core:frequency":100e6}],"annotations":[]},open('rtl.sigmf-meta','w'))
f=b'fmt '+struct.pack('<IHHIIHH',16,1,2,fs,fs*2,2,8)
body=b'WAVE'+f+b'data'+struct.pack('<I',len(d))+d
open('rtl.wav','wb').write(b'RIFF'+struct.pack('<I',len(body))+body)
body=b'WAVE'+b'ds64'+struct.pack('<IQQQI',28,0,len(d),n,0)+f+b'data'+struct.pack('<I',0xFFFFFFFF)+d
open('rtl64.wav','wb').write(b'RF64'+struct.pack('<I',0xFFFFFFFF)+body)
v=(u.astype(float)-127.5)/128
print('%.4f'%(10*np.log10(np.mean(v[0::2]**2+v[1::2]**2))))
PY
want=$(cat ref.txt); echo "numpy, (x - 127.5)/128: $want dBFS"
bad=""
level() { python3 -c "import json; print('%.4f' % json.load(open('$1'))['mean_power_dbfs'])" 2>/dev/null; }
check() { # check WHAT JSON ERR
  got=$(level "$2"); echo "$1: ${got:-$(head -c 160 "$3")} dBFS"
  panics "$3" && bad="$bad panic"
  python3 -c "import sys; sys.exit(0 if abs(float('${got:-nan}')-float('$want'))<0.001 else 1)" || bad="$bad $1=${got:-refused}"
}
"$RXN" analyze rtl.cu8 -r 2M -f 100M --json > a1 2> e1; check "analyze rtl.cu8" a1 e1
"$RXN" analyze rtl.sigmf-meta --json > a2 2> e2; check "analyze rtl.sigmf-meta" a2 e2
"$RXN" analyze rtl.wav -f 100M --json > a3 2> e3; check "analyze rtl.wav (8-bit)" a3 e3
"$RXN" analyze rtl64.wav -f 100M --json > a4 2> e4; check "analyze rtl64.wav (8-bit RF64)" a4 e4
"$RXN" --sim capture -d "driver=rxsim,replay=$L/rtl.cu8,replay_format=cu8,replay_rate=2e6,replay_freq=100e6" \
  -f 100M -r 2M -t 0.2 --json > a5 2> e5; check "capture rxsim replay=rtl.cu8" a5 e5
[ -n "$bad" ] && { echo "broken: the same unsigned bytes read differently by rxnode's readers:$bad"; exit 0; }; echo held; exit 1
