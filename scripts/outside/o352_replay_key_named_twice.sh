#!/bin/bash
# o352: rxsim's replay= of a SigMF meta that names core:sample_rate twice in global (2 MS/s, then 1 MS/s), as a tool
# that appends a corrected value without removing the old one leaves it. `rxnode analyze` refuses it ("duplicate key
# \"core:sample_rate\" in $.global": JSON readers disagree on which one wins); rxsim replayed it at the first one's
# rate, 2 MS/s, and the capture of it said PASS.
# Expected (docs/hardware.md#replaying-a-recording-as-a-radio): refused when the radio is made, naming the key, as
# analyze refuses it; the same meta with the key once still replays. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o352.XXXXXX); cd "$L"; export XDG_CACHE_HOME=$L/cache
python3 - <<'PY'
import numpy as np
fs = 2e6; n = 1 << 18; t = np.arange(n) / fs; rng = np.random.default_rng(1)
x = (0.3 * np.exp(2j * np.pi * 100e3 * t) + 0.001 * (rng.normal(size=n) + 1j * rng.normal(size=n))).astype(np.complex64)
for name, rate in (("once", ''), ("twice", ', "core:sample_rate": 1000000')):
    x.tofile(name + '.sigmf-data')
    open(name + '.sigmf-meta', 'w').write('{"global": {"core:datatype": "cf32_le", "core:sample_rate": 2000000' + rate +
        ', "core:version": "1.2.0"}, "captures": [{"core:sample_start": 0, "core:frequency": 100e6}], "annotations": []}')
PY
"$RXN" analyze twice.sigmf-meta > a.txt 2>&1; echo "analyze twice.sigmf-meta: rc=$? $(head -c 200 a.txt)"
run() { "$RXN" --sim capture -d "driver=rxsim,serial=$1,replay=$L/$1.sigmf-meta" -f 100M -r 2M -t 0.1 > "c.$1.txt" 2>&1; echo $?; }
r1=$(run once); r2=$(run twice)
for f in once twice; do echo "replay $f: $(grep -oE 'rxsim: replay.*|peaks.*|status.*' "c.$f.txt" | tr -s ' ' | tr '\n' ' ' | cut -c1-240)"; done
panics a.txt c.*.txt && { echo "broken: a panic"; exit 0; }
[ "$r1" = 0 ] && grep -qE 'peaks +100.100000 MHz' c.once.txt || { echo "broken: a meta naming its rate once no longer replays (rc=$r1)"; exit 0; }
bad=""
[ "$r2" = 0 ] && bad="$bad replayed at one of the two rates, exit 0 ($(grep status c.twice.txt));"
grep -q 'core:sample_rate is named twice' c.twice.txt || bad="$bad not refused naming core:sample_rate;"
[ -n "$bad" ] && { echo "broken: rxsim replays a meta whose core:sample_rate is named twice:$bad"; exit 0; }; echo held; exit 1
