#!/bin/bash
# o62: a WAV IQ recording from SDR#, HDSDR or SDRuno records its centre frequency in an `auxi` chunk (SpectraVue's
# layout: two SYSTEMTIMEs, then CenterFreq in Hz). `rxnode analyze` ignored it: "centre unknown (peaks are offsets
# from the centre)", and a wrong `--center-hz` was taken without a word, so the peaks were printed at frequencies the
# file itself contradicts. Expected: the auxi centre is the recording's centre; a --center-hz that disagrees is refused.
source "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o62.XXXXXX); cd "$L"
python3 - <<'PY'
import numpy as np, struct
fs=2000000; n=200000; t=np.arange(n)/fs
x=0.3*np.exp(2j*np.pi*250e3*t)+0.001*(np.random.default_rng(1).standard_normal(n)+1j*np.random.default_rng(2).standard_normal(n))
i16=np.empty(2*n,'<i2'); i16[0::2]=np.round(x.real*32767); i16[1::2]=np.round(x.imag*32767)
def chunk(i,b): return i+struct.pack('<I',len(b))+b
st=struct.pack('<8H',2024,5,2,14,12,0,0,0)
auxi=chunk(b'auxi', st+st+struct.pack('<5I',433920000,fs,0,0,0)+b'\0'*128)
body=b'WAVE'+chunk(b'fmt ',struct.pack('<HHIIHH',1,2,fs,fs*4,4,16))+auxi+chunk(b'data',i16.tobytes())
open('SDRSharp_20240502_141200Z_433920000Hz_IQ.wav','wb').write(b'RIFF'+struct.pack('<I',len(body))+body)
PY
F=SDRSharp_20240502_141200Z_433920000Hz_IQ.wav
"$RXN" analyze $F > a.txt 2>&1; echo "analyze rc=$?: $(grep -E 'centre|peaks' a.txt | tr -s ' ' | tr '\n' ' ')"
"$RXN" analyze $F --center-hz 100M > b.txt 2>&1; rb=$?; echo "--center-hz 100M rc=$rb: $(grep -E 'peaks|error' b.txt | tr -s ' ' | head -c 240)"
panics a.txt b.txt && { echo "broken: a panic"; exit 0; }
grep -q 'centre *433.920000 MHz' a.txt || { echo "broken: the auxi chunk's centre (433.92 MHz) was ignored"; exit 0; }
[ $rb -eq 0 ] && { echo "broken: a --center-hz the file contradicts was used without a word"; exit 0; }
echo held; exit 1
