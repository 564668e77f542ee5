#!/bin/bash
# o371: `clkin compare` of two radios tuned to the tone, the tone not connected. Each rxsim radio replays its own
# recording, 1 s at 2 MS/s centred on 100 MHz: -60 dBFS of noise (independent) and the radio's DC offset / LO leakage
# at -40 dBFS (its own phase), no tone: `--tone-hz 100M -f 100M` compared the two leakages, "AGREE … SLAVE relative
# to MASTER -0.00034 ± 0.00038 ppb", a perfect agreement from radios that saw no tone (LOCKED had either read back an
# external clock). Expected: no number, saying the tone lies at a radio's own DC; two rxsim radios 1.0 and 1.5 ppm
# fast, 200 kHz from the tone, still a number within 3σ of +500 ppb. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab o371; cd "$L"
python3 - <<'PY'
import numpy as np
n = 2000000
for name, seed, ph in (('leakA', 1, 0.3), ('leakB', 2, 1.7)):
    rng = np.random.default_rng(seed)
    noise = (rng.standard_normal(n) + 1j * rng.standard_normal(n)) * np.sqrt(0.5) * 1e-3
    (noise + 10**(-40/20) * np.exp(1j * ph)).astype(np.complex64).tofile(name + '.cf32')
PY
R=replay_format=cf32,replay_rate=2e6,replay_freq=100e6
rxn --sim --json clkin compare -d "driver=rxsim,serial=a,replay=$L/leakA.cf32,$R" -d "driver=rxsim,serial=b,replay=$L/leakB.cf32,$R" \
  -f 100M -r 2M --tone-hz 100M > leak.json 2> leak.err; echo "compare of two leakages: rc=$?"
rxn --sim --json clkin compare -d driver=rxsim,serial=c,ppm=1,tone_hz=100.2e6,tone_dbfs=-40 -d driver=rxsim,serial=d,ppm=1.5,tone_hz=100.2e6,tone_dbfs=-40 \
  -f 100M -r 2M --tone-hz 100.2M > off.json 2> off.err; echo "compare 200 kHz from the tone: rc=$?"
bad=""
panics leak.* off.* && bad="$bad panic"
python3 - leak.json off.json <<'PY' || bad="$bad number"
import json, sys
def find(d, k):
    if isinstance(d, dict):
        if k in d: return d[k]
        for v in d.values():
            r = find(v, k)
            if r is not None: return r
    if isinstance(d, list):
        for v in d:
            r = find(v, k)
            if r is not None: return r
    return None
ok = True
for f, want_number in ((sys.argv[1], False), (sys.argv[2], True)):
    try: d = json.load(open(f))
    except Exception as e: print("  %s: not JSON (%s)" % (f, e)); ok = False; continue
    ppb, sig, det = find(d, "relative_ppb"), find(d, "uncertainty_ppb"), find(d, "detail")
    print("  %s: relative %s ± %s ppb: %s" % (f, ppb, sig, str(det)[:240]))
    if want_number:
        truth = (1.5e-6 - 1e-6) / (1 + 1e-6) * 1e9
        ok &= ppb is not None and sig is not None and abs(ppb - truth) <= 3 * sig + 1e-6
    else:
        ok &= ppb is None and "own DC" in json.dumps(d)
sys.exit(0 if ok else 1)
PY
[ -n "$bad" ] && { echo "broken: two radios' own DC leakage compared as the tone:$bad"; exit 0; }; echo held; exit 1
