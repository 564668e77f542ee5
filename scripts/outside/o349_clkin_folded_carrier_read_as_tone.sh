#!/bin/bash
# o349: a CLKIN check with no reference connected and another carrier 7.5 kHz above the reference's frequency.
# rxsim, centre 100 MHz, 2 MS/s, a -10 dBFS emitter at 100.1075 MHz and no tone at 100.1 MHz: `capture
# --clkin-tone-hz 100.1M` read "measured 100.099468 MHz, error +5.3159964 ± 0.0000031 ppm" (-5 dBFS 7.8 kHz above:
# +2.3189807 ppm, inside a ±5 ppm tolerance); a recording of a -8 dBFS carrier 7.6 kHz above and no reference,
# `analyze`: PASS +4.3169824 ± 0.0000039 ppm. The search decimates to ±4 kHz around the tone, and a carrier just
# outside folds in ≥ 34 dB down, its image read as the reference.
# Expected: no number, the text naming the carrier folded in; a real reference 2 ppm off beside a carrier whose
# image is 94 dB under it still a number within 3σ of +2.0000 ppm. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o349.XXXXXX); cd "$L"
cap() { # cap NAME DEVICE TOLERANCE: a 1 s rxsim capture with its CLKIN check, JSON in NAME.json
  "$RXN" --sim --json capture -d "$2" -f 100M -r 2M -t 1 --clkin-tone-hz 100.1M --clkin-tolerance-ppm "$3" > "$1.json" 2>&1
  echo "capture $1 ($2, ±$3 ppm): rc=$?"
}
cap far "driver=rxsim,serial=o349a,emitters=100.1075e6:-10" 0.5
cap near "driver=rxsim,serial=o349b,emitters=100.1078e6:-5" 5
cap real "driver=rxsim,serial=o349c,ppm=2,tone_hz=100.1e6,tone_dbfs=-30,emitters=100.1078e6:-60" 5
python3 - <<'PY'
import numpy as np
fs=2e6; n=2000000; t=np.arange(n)/fs; rng=np.random.default_rng(3)
x=(rng.standard_normal(n)+1j*rng.standard_normal(n))*np.sqrt(0.5)*1e-3 + 10**(-8/20)*np.exp(2j*np.pi*107600*t)
x.astype(np.complex64).tofile('fold.cf32')
PY
"$RXN" --json analyze fold.cf32 -r 2M -f 100M --clkin-tone-hz 100.1M --clkin-tolerance-ppm 5 > rec.json 2>&1; echo "analyze fold.cf32: rc=$?"
bad=""
panics ./*.json && bad="$bad panic"
for f in far near rec real; do
  python3 - $f.json $f <<'PY' || bad="$bad $f"
import json, sys
c = json.load(open(sys.argv[1]))["clkin"]; d = c.get("detail", "") or ""
print("  %s: %s ppm=%s ± %s: %s" % (sys.argv[2], c.get("status"), c.get("ppm"), c.get("ppm_uncertainty"), d[:260]))
if sys.argv[2] == "real":
    ok = c.get("ppm") is not None and abs(c["ppm"] - 2.0) <= 3 * c["ppm_uncertainty"]
else:
    ok = c.get("status") != "PASS" and c.get("ppm") is None and "folded in" in d
sys.exit(0 if ok else 1)
PY
done
[ -n "$bad" ] && { echo "broken: a carrier outside the CLKIN search's band folded in and read as the reference:$bad"; exit 0; }; echo held; exit 1
