#!/bin/bash
# o264: a receiver's I and Q never match: a strong tone leaves a weak copy at its mirror about the tuned centre.
# A cf32 recording (numpy, 0.2 s at 2 MS/s) of a -30 dBFS tone at +200 kHz with 0.5 dB / 3 degrees of IQ imbalance,
# -45 dBFS of DC and -60 dBFS of noise: `analyze` listed `99.800000 MHz -57.9 dBFS SNR 33.4 dB` as a peak like any
# emitter, with nothing saying it sits at the exact mirror of a peak 28 dB stronger.
# Expected: the mirror peak is named as the strong one's possible IQ image (text and JSON `image_of_hz`), and the
# strong one is not. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o1.iqimage.XXXXXX); cd "$L"
python3 - <<'PY'
import numpy as np
fs, n = 2e6, 400000
t = np.arange(n) / fs
a = 10 ** (-30 / 20)
x = a * np.exp(2j * np.pi * 200e3 * t)
g, phi = 10 ** (0.5 / 20), np.deg2rad(3)
i, q = x.real, x.imag
y = i + 1j * g * (np.cos(phi) * q + np.sin(phi) * i)
y += 10 ** (-45 / 20)
rng = np.random.default_rng(1)
y += 10 ** (-60 / 20) / np.sqrt(2) * (rng.standard_normal(n) + 1j * rng.standard_normal(n))
y.astype(np.complex64).tofile("iq.cf32")
PY
"$RXN" analyze iq.cf32 -r 2M -f 100M > text.out 2>&1; echo "analyze: rc=$?"; grep -E "^peaks|^ +[0-9]+\.[0-9]+ +-" text.out | head -4 | sed 's/^/  /'
"$RXN" --json analyze iq.cf32 -r 2M -f 100M > j.json 2>&1
python3 - "$L/j.json" > verdict.txt <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
peaks = d.get("peaks") or d.get("capture", {}).get("peaks") or []
mirror = [p for p in peaks if abs(p["frequency_hz"] - 99.8e6) < 2e3]
strong = [p for p in peaks if abs(p["frequency_hz"] - 100.2e6) < 2e3]
ok = bool(mirror) and abs((mirror[0].get("image_of_hz") or 0) - 100.2e6) < 2e3 and bool(strong) and strong[0].get("image_of_hz") is None
print("named" if ok else "unnamed", json.dumps(mirror[:1]))
PY
echo "json: $(cat verdict.txt)"
bad=""
grep -q '^named' verdict.txt || bad="$bad json-unnamed"
grep -q 'mirror of 100.200000 MHz' text.out || bad="$bad text-unnamed"
panics text.out j.json && bad="$bad panic"
[ -n "$bad" ] && { echo "broken: a receiver's IQ image of a peak 28 dB stronger is listed as an emitter of its own:$bad"; exit 0; }; echo held; exit 1
