#!/bin/bash
# o399: a file read as raw samples by its name or --format may be a container another tool (or rxnode) wrote: a WAV
# (Python's `wave`, SDR#, HDSDR) renamed `.cs16`, a `.sigmf` archive (tar) renamed `.cf32`. `rxnode analyze` read them
# as raw: the WAV's 44-byte header became 11 samples (96 011 for 96 000), the archive's tar headers and meta samples,
# a report (exit 1: no noise floor in a clean tone), while rxsim's replay= refuses the same files. Expected: refused (no report) naming what the file is and how
# to read it; read as what it is (--format wav), the WAV gives its own sample count and tone.
source "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o399.XXXXXX); cd "$L"
python3 - <<'PY'
import numpy as np, wave, json, tarfile, io
fs=192000; n=96000; t=np.arange(n)/fs; x=0.5*np.exp(2j*np.pi*1e4*t)
a=np.empty(2*n,'<i2'); a[0::2]=np.round(x.real*32767); a[1::2]=np.round(x.imag*32767)
w=wave.open('rec.cs16','wb'); w.setnchannels(2); w.setsampwidth(2); w.setframerate(fs); w.writeframes(a.tobytes()); w.close()
c=(0.5*np.exp(2j*np.pi*1e5*np.arange(65536)/1e6)).astype('<c8')
meta={"global":{"core:datatype":"cf32_le","core:sample_rate":1e6,"core:version":"1.2.0"},"captures":[{"core:sample_start":0,"core:frequency":433.92e6}],"annotations":[]}
with tarfile.open('rec.cf32','w',format=tarfile.USTAR_FORMAT) as tf:
    for name,b in [('rec/rec.sigmf-meta',json.dumps(meta).encode()),('rec/rec.sigmf-data',c.tobytes())]:
        ti=tarfile.TarInfo(name); ti.size=len(b); tf.addfile(ti,io.BytesIO(b))
PY
fail=""
for args in "rec.cs16 -r 192k" "rec.cs16 --format cs8 -r 192k" "rec.cf32 -r 1M -f 433.92M"; do
  "$RXN" analyze $args > o.txt 2>&1; rc=$?
  echo "analyze $args: rc=$rc $(grep -E '^(file|samples)|error' o.txt | tr -s ' ' | tr '\n' ' ' | head -c 260)"
  panics o.txt && { echo "broken: a panic"; exit 0; }
  grep -q '^file ' o.txt && fail="$fail '$args' analysed as raw samples (rc=$rc);"
  ! grep -q '^file ' o.txt && ! grep -qE 'not raw samples but a (WAV recording|tar archive)' o.txt && fail="$fail '$args' refused without naming the container;"
done
"$RXN" analyze rec.cs16 --format wav > w.txt 2>&1; rw=$?
echo "analyze rec.cs16 --format wav: rc=$rw $(grep -E '^(samples|peaks)|error' w.txt | tr -s ' ' | tr '\n' ' ' | head -c 200)"
grep -q '^samples *96000 ' w.txt || fail="$fail --format wav did not read the WAV's 96000 samples;"
[ -n "$fail" ] && { echo "broken:$fail"; exit 0; }
echo held; exit 1
