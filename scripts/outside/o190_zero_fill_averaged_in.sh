#!/bin/bash
# o190: a confident wrong number from another tool's recording: a recorder that lost samples (an overflow, a USB hiccup)
# filled them with zeros. A 1 s cf32 recording at 2 MS/s, a -20 dBFS tone at +300 kHz in noise, samples 800000-1199999
# exactly zero (and the same as a SigMF ci16_le pair): `analyze` averaged the silence in (peak -21.2 dBFS, mean power
# -21.0 dBFS, the floor 1 dB low) and said nothing of it. Expected: the run skipped and reported by place and length
# (text and --json `silence`), the levels of the recorded samples (-20.0 dBFS), and a file of nothing but zeros with no
# level at all. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o190.XXXXXX); cd "$L"
python3 - <<'PY'
import numpy as np, json
rng=np.random.default_rng(1); fs=2e6; n=2000000; t=np.arange(n)/fs
x=0.1*np.exp(2j*np.pi*300e3*t)+(rng.normal(size=n)+1j*rng.normal(size=n))*1e-3/np.sqrt(2)
x[800000:1200000]=0
x.astype(np.complex64).tofile('gap.cf32')
b=np.empty(2*n,np.int16); b[0::2]=np.round(x.real*32767); b[1::2]=np.round(x.imag*32767); b.tofile('gap.sigmf-data')
json.dump({"global":{"core:datatype":"ci16_le","core:sample_rate":fs,"core:version":"1.2.0"},
  "captures":[{"core:sample_start":0,"core:frequency":100e6}],"annotations":[]},open('gap.sigmf-meta','w'))
np.zeros(2*n,np.float32).tofile('zero.cf32')
PY
bad=""
"$RXN" analyze gap.cf32 -r 2M -f 100M > a.txt 2>&1; echo "analyze gap.cf32: rc=$?"; grep -E '^(samples|silence|  |noise floor|mean power|peaks)' a.txt
panics a.txt && bad="$bad panic"
peak=$(awk '/^peaks/ {print $4; exit}' a.txt); mean=$(awk '/^mean power/ {print $3; exit}' a.txt)
python3 -c "import sys; sys.exit(0 if abs(float('$peak')+20)<0.3 and abs(float('$mean')+20)<0.3 else 1)" 2>/dev/null \
  || bad="$bad levels-averaged-over-silence(peak=$peak,mean=$mean)"
grep -q '^silence .*400000 samples' a.txt && grep -q 'samples 800000…1199999' a.txt || bad="$bad text-silent-on-the-zeros"
for f in gap.cf32 gap.sigmf-meta; do
  "$RXN" --json analyze "$f" -r 2M -f 100M > "$f.json" 2>&1; echo "analyze --json $f: rc=$?"
  python3 - "$f.json" <<'PY' || bad="$bad json-$f"
import json, sys
d = json.load(open(sys.argv[1]))
s = d.get("silence") or {}
print(" silence:", s, "samples:", d.get("samples"), "mean:", d.get("mean_power_dbfs"))
ok = s.get("runs") == [{"start": 800000, "samples": 400000}] and d.get("samples") == 1600000 \
    and abs(d["mean_power_dbfs"] + 20) < 0.3
sys.exit(0 if ok else 1)
PY
done
"$RXN" --json analyze zero.cf32 -r 2M -f 100M > z.json 2>&1; echo "analyze --json zero.cf32: rc=$?"
python3 - z.json <<'PY' || bad="$bad all-zero-file-not-silence-or-has-a-level"
import json, sys
d = json.load(open(sys.argv[1]))
print(" zero.cf32: mean", d.get("mean_power_dbfs"), "floor", d.get("noise_floor_db"), "samples", d.get("samples"),
      "silence", {k: v for k, v in (d.get("silence") or {}).items() if k != "runs"})
sys.exit(0 if d.get("mean_power_dbfs") is None and d.get("noise_floor_db") is None and not d.get("peaks")
         and (d.get("silence") or {}).get("samples") == 2000000 else 1)
PY
[ -n "$bad" ] && { echo "broken: zero-filled samples are averaged into the levels:$bad"; exit 0; }; echo held; exit 1
