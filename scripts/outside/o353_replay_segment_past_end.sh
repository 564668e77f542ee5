#!/bin/bash
# o353: rxsim's replay= of SigMF recordings whose capture segments do not fit their data, both refused by `rxnode
# analyze`: a recording of two segments whose second starts at sample 300000 of a dataset of 262144 samples (the
# copy lost the samples it describes: "capture segment 1 starts at sample 300000, but the dataset … has … bytes"),
# and segments out of order (1000, then 500: "segments must be sorted by core:sample_start"). rxsim replayed both
# as if whole, the captures PASS.
# Expected (docs/hardware.md#replaying-a-recording-as-a-radio): refused when the radio is made, naming the segment,
# as analyze does; two segments that fit still replay. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o353.XXXXXX); cd "$L"; export XDG_CACHE_HOME=$L/cache
python3 - <<'PY'
import numpy as np, json
fs = 2e6; n = 1 << 18; t = np.arange(n) / fs; rng = np.random.default_rng(1)
x = (0.3 * np.exp(2j * np.pi * 100e3 * t) + 0.001 * (rng.normal(size=n) + 1j * rng.normal(size=n))).astype(np.complex64)
g = {"core:datatype": "cf32_le", "core:sample_rate": fs, "core:version": "1.2.0"}
for name, second in (("fits", [100000]), ("lost", [300000]), ("unsorted", [1000, 500])):
    x.tofile(name + '.sigmf-data')
    caps = [{"core:sample_start": 0, "core:frequency": 100e6}] + [{"core:sample_start": s, "core:frequency": 100e6} for s in second]
    json.dump({"global": g, "captures": caps, "annotations": []}, open(name + '.sigmf-meta', 'w'))
PY
run() { "$RXN" --sim capture -d "driver=rxsim,serial=$1,replay=$L/$1.sigmf-meta" -f 100M -r 2M -t 0.1 > "c.$1.txt" 2>&1; echo $?; }
for f in lost unsorted; do "$RXN" analyze $f.sigmf-meta > a.$f.txt 2>&1; echo "analyze $f.sigmf-meta: rc=$? $(head -c 180 a.$f.txt)"; done
r1=$(run fits); r2=$(run lost); r3=$(run unsorted)
for f in fits lost unsorted; do echo "replay $f: $(grep -oE 'rxsim: replay.*|peaks.*|status.*' "c.$f.txt" | tr -s ' ' | tr '\n' ' ' | cut -c1-240)"; done
panics a.*.txt c.*.txt && { echo "broken: a panic"; exit 0; }
[ "$r1" = 0 ] && grep -qE 'peaks +100.100000 MHz' c.fits.txt || { echo "broken: two segments that fit no longer replay (rc=$r1)"; exit 0; }
bad=""
[ "$r2" = 0 ] && bad="$bad a segment past the data's end replayed, exit 0 ($(grep status c.lost.txt));"
grep -q 'capture segment 1 starts at sample 300000, but the dataset .* holds 262144 samples' c.lost.txt || bad="$bad lost not refused naming the segment;"
[ "$r3" = 0 ] && bad="$bad unsorted segments replayed, exit 0 ($(grep status c.unsorted.txt));"
grep -q 'segments must be sorted by core:sample_start' c.unsorted.txt || bad="$bad unsorted not refused;"
[ -n "$bad" ] && { echo "broken: rxsim replays segments that do not fit their data:$bad"; exit 0; }; echo held; exit 1
