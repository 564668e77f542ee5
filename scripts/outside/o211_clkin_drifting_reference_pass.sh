#!/bin/bash
# o211: a PASS that was not true: a reference (or the radio's clock) drifting during the capture. A cf32 recording,
# 1 s at 2 MS/s, a -40 dBFS tone at 100.1 MHz in -60 dBFS of noise, the clock error running linearly from 0 to 0.8 ppm:
# `analyze --clkin-tone-hz 100.1M` (tolerance 0.5 ppm) said PASS +0.4006071 ± 0.0000034 ppm, though the clock was
# 0.8 ppm off at the end; from 0 to 2.5 ppm it said "reference tone too weak: SNR 64.5 dB …, need 18.0 dB". Expected:
# a steady tone PASS as before (σ under 1e-5 ppm); the drifting ones FAIL with no number, saying the tone is not
# steady (never "too weak" at 64 dB). Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o211.XXXXXX); cd "$L"
python3 - <<'PY'
import numpy as np
fs=2e6; n=2000000; t=np.arange(n)/fs
for name, span in (("steady", 0.0), ("drift08", 0.8), ("drift25", 2.5)):
    rng=np.random.default_rng(2)
    e=span*1e-6*t/t[-1]
    ph=2*np.pi*np.cumsum(100e3-100.1e6*e)/fs
    x=10**(-40/20)*np.exp(1j*ph)+(rng.standard_normal(n)+1j*rng.standard_normal(n))*np.sqrt(0.5)*1e-3
    x.astype(np.complex64).tofile(name+'.cf32')
PY
bad=""
for f in steady drift08 drift25; do
  "$RXN" --json analyze $f.cf32 -r 2M -f 100M --clkin-tone-hz 100.1M > $f.json 2>&1; echo "analyze $f.cf32: rc=$?"
  panics $f.json && bad="$bad panic"
  python3 - $f.json $f <<'PY' || bad="$bad $f"
import json, sys
c = json.load(open(sys.argv[1]))["clkin"]
print("  %s: %s ppm=%s ± %s: %s" % (sys.argv[2], c.get("status"), c.get("ppm"), c.get("ppm_uncertainty"), c.get("detail")))
if sys.argv[2] == "steady":
    ok = c.get("status") == "PASS" and abs(c["ppm"]) < 1e-5 and c["ppm_uncertainty"] < 1e-5
else:
    ok = c.get("status") != "PASS" and c.get("ppm") is None and "steady" in c.get("detail", "") \
        and "too weak" not in c.get("detail", "")
sys.exit(0 if ok else 1)
PY
done
[ -n "$bad" ] && { echo "broken: a drifting reference is measured as one steady clock error:$bad"; exit 0; }; echo held; exit 1
