#!/bin/bash
# o212: a wrong reason: the reference at another frequency. A cf32 recording, 1 s at 2 MS/s, centre 100 MHz, a
# -40 dBFS tone at 100.1016 MHz (a generator set 1.6 kHz high, or a clock 16 ppm off) in -60 dBFS of noise:
# `analyze --clkin-tone-hz 100.1M` (window ±10 ppm) said "reference tone too weak: SNR 8.6 dB after integration",
# while `peaks` listed the tone at -40.0 dBFS, SNR 51 dB. Expected: FAIL with no number naming the carrier beside
# the window (its frequency and the ppm it would mean), never "too weak"; noise alone still "too weak".
# Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o212.XXXXXX); cd "$L"
python3 - <<'PY'
import numpy as np
fs=2e6; n=2000000; t=np.arange(n)/fs; rng=np.random.default_rng(3)
noise=(rng.standard_normal(n)+1j*rng.standard_normal(n))*np.sqrt(0.5)*1e-3
(10**(-40/20)*np.exp(2j*np.pi*101.6e3*t)+noise).astype(np.complex64).tofile('beside.cf32')
noise.astype(np.complex64).tofile('noise.cf32')
PY
bad=""
for f in beside noise; do
  "$RXN" --json analyze $f.cf32 -r 2M -f 100M --clkin-tone-hz 100.1M > $f.json 2>&1; echo "analyze $f.cf32: rc=$?"
  panics $f.json && bad="$bad panic"
  python3 - $f.json $f <<'PY' || bad="$bad $f"
import json, sys
c = json.load(open(sys.argv[1]))["clkin"]; d = c.get("detail", "")
print("  %s: %s ppm=%s: %s" % (sys.argv[2], c.get("status"), c.get("ppm"), d))
ok = c.get("status") != "PASS" and c.get("ppm") is None
if sys.argv[2] == "beside":
    ok = ok and "100.101600 MHz" in d and "too weak" not in d
else:
    ok = ok and "too weak" in d
sys.exit(0 if ok else 1)
PY
done
[ -n "$bad" ] && { echo "broken: a strong tone beside the CLKIN window is called too weak:$bad"; exit 0; }; echo held; exit 1
