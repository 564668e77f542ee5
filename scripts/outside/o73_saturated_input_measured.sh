#!/bin/bash
# o73: a confident wrong number, the careless operator: the gain too high, the converter clipping. A HackRF-style cs8
# recording of a carrier driven past full scale (every sample clipped) read by `analyze`, and a live `capture` and
# `sweep` on rxsim with a carrier above full scale: the clipped tone's odd harmonics were listed as peaks at 29–53 dB
# SNR with a noise floor, the capture PASS and the sweep PASS, while `clipped 100.0000 %` sat on the next line.
# Expected: no floor, no peak, the reason (the input saturated, lower the gain), the capture FAIL and the saturated
# sweep hops failed, not filled in. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o73.XXXXXX); cd "$L"; git init -q .
python3 - <<'PY'
import numpy as np
rng=np.random.default_rng(7); fs=2e6; n=int(fs); t=np.arange(n)/fs
x=1.35*np.exp(2j*np.pi*100e3*t)+(rng.normal(size=n)+1j*rng.normal(size=n))*0.01
b=np.empty(2*n,np.int8); b[0::2]=np.clip(np.round(x.real*127),-128,127); b[1::2]=np.clip(np.round(x.imag*127),-128,127)
b.tofile('hot.cs8')
PY
bad=""
"$RXN" analyze hot.cs8 -r 2M -f 100M > a.txt 2>&1; echo "analyze hot.cs8: rc=$?"; sed -n '/^noise floor/,/^clock/p' a.txt
panics a.txt && bad="$bad panic"
grep -q 'SNR' a.txt && bad="$bad analyze-peaks-with-snr"
grep -q 'input saturated' a.txt || bad="$bad analyze-no-reason"
"$RXN" capture --sim -d "driver=rxsim,serial=HOT,tone_hz=100.1e6,tone_dbfs=3" -f 100M -r 1M -t 0.2 > c.txt 2>&1; echo "capture: rc=$?"; grep -E 'peaks|clipped|status' c.txt
panics c.txt && bad="$bad panic"
grep -q 'status: PASS' c.txt && bad="$bad capture-pass"
grep -q 'SNR' c.txt && bad="$bad capture-peaks-with-snr"
"$RXN" sweep --sim -d "driver=rxsim,serial=HOT,settle_s=0.002,noise_dbfs=-60,tone_hz=91e6,tone_dbfs=3" --start-hz 88e6 \
  --stop-hz 108e6 --bin-hz 10e3 -r 10e6 --dwell-s 0.005 --settle-s 0.002 > s.txt 2>&1; echo "sweep: rc=$?"; grep -vE '^ ?WARN' s.txt | head -8
panics s.txt && bad="$bad panic"
grep -q '^sweep PASS' s.txt && bad="$bad sweep-pass"
grep -q 'failed hop' s.txt || bad="$bad sweep-no-failed-hop"
[ -n "$bad" ] && { echo "broken: a saturated input is measured:$bad"; exit 0; }; echo held; exit 1
