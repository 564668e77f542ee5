#!/bin/bash
# o161: SDR# and HDSDR name their baseband WAV recordings with the centre (`SDRSharp_20230115_093012Z_100100000Hz_IQ.wav`,
# `HDSDR_20230115_093012Z_7100kHz_RF.wav`). A WAV without an `auxi` chunk was analysed with "centre unknown" (the peaks
# offsets only), and one whose chunk and name disagree (99 MHz in the chunk, 100.1 MHz in the name) was analysed at the
# chunk's centre without a word. Expected: the name's centre used when no chunk states one, reported as coming from
# the file name (JSON `center_from: "file_name"`, the text says so); two centres refused naming both; an audio
# recording's name (`_AF`, the tuned frequency) gives none.
source "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o161.XXXXXX); cd "$L"
python3 - <<'PY'
import numpy as np, struct
fs=2000000; n=1<<18; t=np.arange(n)/fs
x=0.3*np.exp(2j*np.pi*200e3*t)+0.001*(np.random.default_rng(1).normal(size=n)+1j*np.random.default_rng(2).normal(size=n))
i16=np.empty(2*n,'<i2'); i16[0::2]=np.round(x.real*32767); i16[1::2]=np.round(x.imag*32767); data=i16.tobytes()
def wav(name, auxi_hz=None):
    f=b'fmt '+struct.pack('<IHHIIHH',16,1,2,fs,fs*4,4,16)
    st=struct.pack('<8H',2023,1,0,15,9,30,12,0)
    a=b'' if auxi_hz is None else b'auxi'+struct.pack('<I',164)+st+st+struct.pack('<5I',auxi_hz,fs,0,0,0)+b'\0'*112
    body=b'WAVE'+f+a+b'data'+struct.pack('<I',len(data))+data
    open(name,'wb').write(b'RIFF'+struct.pack('<I',len(body))+body)
wav('SDRSharp_20230115_093012Z_100100000Hz_IQ.wav'); wav('HDSDR_20230115_093012Z_7100kHz_RF.wav')
wav('SDRSharp_20230116_093012Z_100100000Hz_IQ.wav', 99000000); wav('SDRSharp_20230115_093012Z_100100000Hz_AF.wav')
PY
bad=""
show() { python3 -c "import json; d=json.load(open('$1')); print(d['center_hz'], d.get('center_from','(no center_from)'), d['peaks'][0]['frequency_hz'] if d['peaks'] else '')" 2>/dev/null; }
for f in SDRSharp_20230115_093012Z_100100000Hz_IQ.wav:100100000 HDSDR_20230115_093012Z_7100kHz_RF.wav:7100000; do
  n=${f%%:*}; want=${f##*:}
  "$RXN" analyze "$n" --json > j 2> e; rc=$?; got=$(show j); echo "$n: rc=$rc centre, from, first peak: $got"
  panics e && bad="$bad panic"
  case "$got" in "$want.0 file_name "*) ;; *) bad="$bad $n-centre";; esac
done
"$RXN" analyze SDRSharp_20230115_093012Z_100100000Hz_IQ.wav > t 2>&1; grep '^centre' t
grep -q "^centre *100.100000 MHz (from the file's name)" t || bad="$bad text-silent"
n=SDRSharp_20230116_093012Z_100100000Hz_IQ.wav
"$RXN" analyze "$n" --json > j 2> e; rc=$?; echo "$n (auxi 99 MHz): rc=$rc $(show j) $(head -c 220 e)"
[ $rc -eq 2 ] && grep -q '99000000' e && grep -q '100100000' e || bad="$bad two-centres-one-silently-picked"
n=SDRSharp_20230115_093012Z_100100000Hz_AF.wav
"$RXN" analyze "$n" --json > j 2> e; rc=$?; got=$(show j); echo "$n: rc=$rc $got"
case "$got" in "None "*) ;; *) bad="$bad audio-name-read";; esac
[ -n "$bad" ] && { echo "broken: the centre in SDR#/HDSDR file names:$bad"; exit 0; }; echo held; exit 1
