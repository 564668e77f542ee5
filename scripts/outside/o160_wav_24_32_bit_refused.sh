#!/bin/bash
# o160: integer PCM IQ WAV of 24 and 32 bits, as HDSDR and SDRuno write them (WAVE_FORMAT_PCM, and
# WAVE_FORMAT_EXTENSIBLE with the PCM sub-format, 24 valid bits in 32-bit containers, 12 in 16-bit ones too) and 64-bit
# float were refused by `rxnode analyze` ("WAV sample format Int 24-bit is not supported", "Int 12-bit"). Expected: each read to full scale 1,
# its mean power what an independent reader (python's `wave` for the frames, numpy for the scaling) makes of the same
# bytes, to 0.001 dB; 32-bit float as before; a compressed WAV refused naming the fmt field and its value.
source "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o160.XXXXXX); cd "$L"
python3 - <<'PY'
import numpy as np, struct
fs=2000000; n=1<<18; t=np.arange(n)/fs; rng=np.random.default_rng(1)
x=0.5*np.exp(2j*np.pi*200e3*t)+0.01*(rng.normal(size=n)+1j*rng.normal(size=n))
iq=np.empty(2*n); iq[0::2]=x.real; iq[1::2]=x.imag
TAIL=bytes([0,0,0x10,0,0x80,0,0,0xAA,0,0x38,0x9B,0x71])
def write(name, tag, bits, data, ext=None):
    ba=2*bits//8
    if ext is None: f=struct.pack('<HHIIHH',tag,2,fs,fs*ba,ba,bits)
    else: f=struct.pack('<HHIIHHHHI',0xFFFE,2,fs,fs*ba,ba,bits,22,ext,3)+struct.pack('<I',tag)+TAIL
    body=b'WAVEfmt '+struct.pack('<I',len(f))+f+b'data'+struct.pack('<I',len(data))+data
    open(name,'wb').write(b'RIFF'+struct.pack('<I',len(body))+body)
def pcm(bits, container):
    v=np.clip(np.round(iq*2.0**(bits-1)),-2**(bits-1),2**(bits-1)-1).astype('<i8')<<(container-bits)
    return v.astype('<i8').view(np.uint8).reshape(-1,8)[:,:container//8].tobytes()
write('pcm24.wav',1,24,pcm(24,24)); write('pcm32.wav',1,32,pcm(32,32))
write('ext24.wav',1,24,pcm(24,24),24); write('ext32.wav',1,32,pcm(32,32),32); write('ext24in32.wav',1,32,pcm(24,32),24)
write('ext12in16.wav',1,16,pcm(12,16),12)
write('f32.wav',3,32,iq.astype('<f4').tobytes()); write('f64.wav',3,64,iq.astype('<f8').tobytes())
write('adpcm.wav',2,16,pcm(16,16))
PY
# The independent reading: python's wave module for the PCM frames (fmt, data), numpy for the scaling.
python3 - > ref.txt <<'PY'
import wave, struct, numpy as np
def frames(p):
    try:
        w=wave.open(p); return w.getsampwidth(), w.readframes(w.getnframes()), False
    except wave.Error:  # extensible or float, which this python's wave may not open: the data chunk by hand
        b=open(p,'rb').read(); i=12
        while True:
            cid=b[i:i+4]; ln=struct.unpack('<I',b[i+4:i+8])[0]
            if cid==b'fmt ': tag,bits=struct.unpack('<H',b[i+8:i+10])[0],struct.unpack('<H',b[i+22:i+24])[0]
            if cid==b'data': return bits//8, b[i+8:i+8+ln], tag==3
            i+=8+ln+(ln&1)
for p in ['pcm24.wav','pcm32.wav','ext24.wav','ext32.wav','ext24in32.wav','ext12in16.wav','f32.wav','f64.wav']:
    w,d,fl=frames(p)
    if fl: v=np.frombuffer(d,'<f%d'%w).astype(float)
    else:
        u=np.frombuffer(d,np.uint8).reshape(-1,w); v=np.zeros(len(u),np.int64)
        for k in range(w): v|=u[:,k].astype(np.int64)<<(8*k)
        v=np.where(v>=1<<(8*w-1),v-(1<<(8*w)),v)/2.0**(8*w-1)
    print(p, '%.4f'%(10*np.log10(np.mean(v[0::2]**2+v[1::2]**2))))
PY
bad=""
while read -r f want; do
  "$RXN" analyze "$f" --json > "$f.json" 2> "$f.err"; rc=$?
  got=$(python3 -c "import json,sys; d=json.load(open('$f.json')); print('%.4f %s %.0f' % (d['mean_power_dbfs'], d['datatype'], d['peaks'][0]['frequency_hz']))" 2>/dev/null)
  echo "$f: independent $want dBFS; rxnode rc=$rc ${got:-$(head -c 150 "$f.err")}"
  panics "$f.err" && bad="$bad panic"
  [ $rc -eq 0 ] || { bad="$bad $f-refused"; continue; }
  python3 -c "import sys; a,b='$want','${got%% *}'; sys.exit(0 if abs(float(a)-float(b))<0.001 else 1)" || bad="$bad $f-level"
  [ "${got##* }" = 200000 ] || bad="$bad $f-tone"
done < ref.txt
"$RXN" analyze adpcm.wav > adpcm.txt 2>&1; rc=$?; echo "adpcm.wav: rc=$rc $(head -c 200 adpcm.txt)"
[ $rc -ne 0 ] && grep -q 'wFormatTag 2' adpcm.txt || bad="$bad compressed-not-named"
[ -n "$bad" ] && { echo "broken: 24/32-bit integer and 64-bit float WAV IQ:$bad"; exit 0; }; echo held; exit 1
