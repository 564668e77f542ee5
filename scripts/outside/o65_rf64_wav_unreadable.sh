#!/bin/bash
# o65: an RF64 WAV (EBU Tech 3306: `RF64`, a ds64 chunk with the 64-bit sizes, the data chunk's 32-bit size the
# placeholder 0xFFFFFFFF) is what HDSDR and SDRuno write once an IQ recording passes 4 GiB. `rxnode analyze` refused it
# as "not a readable WAV file: Ill-formed WAVE file: no RIFF tag found" — no word of RF64, no way forward. Expected:
# read like the WAV it extends (rate from fmt, length from ds64, centre from auxi).
source "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o65.XXXXXX); cd "$L"
python3 - <<'PY'
import numpy as np, struct
fs=2000000; n=200000; t=np.arange(n)/fs
x=0.3*np.exp(2j*np.pi*250e3*t)+0.001*(np.random.default_rng(1).standard_normal(n)+1j*np.random.default_rng(2).standard_normal(n))
i16=np.empty(2*n,'<i2'); i16[0::2]=np.round(x.real*32767); i16[1::2]=np.round(x.imag*32767); data=i16.tobytes()
def chunk(i,b): return i+struct.pack('<I',len(b))+b
st=struct.pack('<8H',2024,5,2,14,12,0,0,0)
auxi=chunk(b'auxi', st+st+struct.pack('<5I',433920000,fs,0,0,0)+b'\0'*16)
body=b'WAVE'+chunk(b'ds64',struct.pack('<QQQI',0,len(data),n,0))+chunk(b'fmt ',struct.pack('<HHIIHH',1,2,fs,fs*4,4,16))+auxi
open('HDSDR_20240502_141200Z_433920kHz_RF.wav','wb').write(b'RF64'+struct.pack('<I',0xFFFFFFFF)+body+b'data'+struct.pack('<I',0xFFFFFFFF)+data)
PY
"$RXN" analyze HDSDR_20240502_141200Z_433920kHz_RF.wav > a.txt 2>&1; rc=$?
echo "analyze rc=$rc: $(grep -E 'samples|centre|peaks|error' a.txt | tr -s ' ' | tr '\n' ' ' | cut -c1-260)"
panics a.txt && { echo "broken: a panic"; exit 0; }
[ $rc -ne 0 ] && { echo "broken: an RF64 WAV (HDSDR/SDRuno past 4 GiB) is not read: $(head -c 120 a.txt)"; exit 0; }
grep -q 'samples *200000 at 2.000 MS/s' a.txt && grep -q '434.170000 MHz' a.txt || { echo "broken: read, but not as recorded"; exit 0; }
echo held; exit 1
