#!/bin/bash
# o370: the reference tone at the tuned centre, and the reference not connected. A cf32 recording, 1 s at 2 MS/s,
# centre 100 MHz, -60 dBFS of noise and the radio's own DC offset / LO leakage at -40 dBFS, no tone at all:
# `analyze --clkin-tone-hz 100M` read the leakage as the reference, PASS +0.0000001 ± 0.0000011 ppm, a perfect clock
# from a radio that saw no reference. The leakage sits at 0 Hz of baseband whatever the clock does. Expected: no
# number, saying the tone lies at the receiver's own DC; a reference 2 ppm off (200 Hz from DC) still a number within
# 3σ of +2.0000 ppm. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o370.XXXXXX); cd "$L"
python3 - <<'PY'
import numpy as np
fs=2e6; n=2000000; t=np.arange(n)/fs; rng=np.random.default_rng(7)
noise=(rng.standard_normal(n)+1j*rng.standard_normal(n))*np.sqrt(0.5)*1e-3
leak=10**(-40/20)*np.exp(0.3j)
(noise+leak).astype(np.complex64).tofile('leak.cf32')
truth=100e6/(1+2e-6)-100e6   # a clock 2 ppm fast: the 100 MHz tone 200 Hz below the centre
(noise+10**(-40/20)*np.exp(2j*np.pi*truth*t)).astype(np.complex64).tofile('off.cf32')
PY
bad=""
for f in leak off; do
  "$RXN" --json analyze $f.cf32 -r 2M -f 100M --clkin-tone-hz 100M --clkin-tolerance-ppm 5 > $f.json 2>&1; echo "analyze $f.cf32: rc=$?"
  panics $f.json && bad="$bad panic"
  python3 - $f.json $f <<'PY' || bad="$bad $f"
import json, sys
c = json.load(open(sys.argv[1]))["clkin"]; d = c.get("detail", "") or ""
print("  %s: %s ppm=%s ± %s: %s" % (sys.argv[2], c.get("status"), c.get("ppm"), c.get("ppm_uncertainty"), d[:240]))
if sys.argv[2] == "leak":
    ok = c.get("status") != "PASS" and c.get("ppm") is None and "receiver's own DC" in d
else:
    ok = c.get("status") == "PASS" and abs(c["ppm"] - 2.0) <= 3 * c["ppm_uncertainty"]
sys.exit(0 if ok else 1)
PY
done
[ -n "$bad" ] && { echo "broken: the radio's own DC leakage at the centre read as the CLKIN reference:$bad"; exit 0; }; echo held; exit 1
