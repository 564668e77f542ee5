#!/bin/bash
# o398: two tools write a WAV `auxi` chunk. SDR#, HDSDR and SDRuno write SpectraVue's binary layout (two SYSTEMTIMEs,
# then CenterFreq in Hz); SDR Console writes XML text there (UTF-16LE, or UTF-8) whose `RadioCenterFreq` attribute is
# the centre. `rxnode analyze` read every auxi chunk as the binary layout: bytes 32..36 of the XML's text became the
# centre, a 7.1 MHz recording's +10 kHz tone reported at 3.155774 MHz (UTF-16) or 2015.402879 MHz (UTF-8), exit 0.
# Expected: the XML is read for its RadioCenterFreq (tone at 7.110000 MHz); an auxi chunk that is neither layout
# (SYSTEMTIMEs no clock shows) is refused naming the field, never read as a number.
source "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o398.XXXXXX); cd "$L"
python3 - <<'PY'
import numpy as np, struct
fs=192000; n=96000; t=np.arange(n)/fs
x=0.5*np.exp(2j*np.pi*10000*t)+0.001*(np.random.default_rng(1).standard_normal(n)+1j*np.random.default_rng(2).standard_normal(n))
i16=np.empty(2*n,'<i2'); i16[0::2]=np.round(x.real*32767); i16[1::2]=np.round(x.imag*32767)
def chunk(i,b): return i+struct.pack('<I',len(b))+b+(b'\0' if len(b)%2 else b'')
xml=('<?xml version="1.0"?><SDR-XML-Root xml:lang="EN" Description="Saved recording data" Created="07-Dec-2026 12:00">'
     '<Definition CurrentTimeUTC="07-12-2026 12:00:00" Filename="rec.wav" RadioModel="Airspy HF+" SoftwareName="SDR Console" '
     'RadioCenterFreq="7100000" SampleRate="192000" BitsPerSample="16" BytesPerSecond="768000" UTCSeconds="1796644800">'
     '</Definition></SDR-XML-Root>')
def wav(name, aux):
    body=b'WAVE'+chunk(b'fmt ',struct.pack('<HHIIHH',1,2,fs,fs*4,4,16))+chunk(b'auxi',aux)+chunk(b'data',i16.tobytes())
    open(name,'wb').write(b'RIFF'+struct.pack('<I',len(body))+body)
wav('sdrconsole_utf16.wav', xml.encode('utf-16-le')+b'\0\0')
wav('sdrconsole_utf8.wav', xml.encode('utf-8')+b'\0')
# Binary layout with a StartTime of month 40: no SYSTEMTIME, so no CenterFreq to trust.
wav('garbled_auxi.wav', struct.pack('<8H',2026,40,0,7,12,0,0,0)+b'\0'*16+struct.pack('<5I',433920000,fs,0,0,0)+b'\0'*128)
PY
fail=""
for f in sdrconsole_utf16.wav sdrconsole_utf8.wav; do
  "$RXN" analyze $f > $f.txt 2>&1; rc=$?
  echo "$f: rc=$rc $(grep -E '^(centre|peaks)|error' $f.txt | tr -s ' ' | tr '\n' ' ' | head -c 200)"
  grep -q 'peaks *7\.110000 MHz' $f.txt || fail="$fail $f: tone not at 7.110000 MHz (rc=$rc);"
done
"$RXN" analyze garbled_auxi.wav > g.txt 2>&1; rg=$?
echo "garbled_auxi.wav: rc=$rg $(grep -E '^(centre|peaks)|error' g.txt | tr -s ' ' | tr '\n' ' ' | head -c 300)"
panics *.txt && { echo "broken: a panic"; exit 0; }
[ $rg -eq 0 ] && fail="$fail garbled_auxi.wav analysed (rc=0) at a centre from a chunk that is no SYSTEMTIME layout;"
[ $rg -ne 0 ] && ! grep -q 'wMonth' g.txt && fail="$fail garbled_auxi.wav refused without naming the field;"
[ -n "$fail" ] && { echo "broken:$fail"; exit 0; }
echo held; exit 1
