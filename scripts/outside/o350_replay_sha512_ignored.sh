#!/bin/bash
# o350: rxsim's replay= of a SigMF recording whose dataset does not match its own core:sha512 (cut to half its samples,
# whole samples, as a copy that stopped or a file swapped for another leaves it). `rxnode analyze` refuses it
# ("core:sha512 does not match the dataset … nothing is reported from them", exit 2); rxsim replayed it as if whole
# and the capture of it said PASS, its tone reported with full confidence.
# Expected (docs/hardware.md#replaying-a-recording-as-a-radio): refused when the radio is made, naming the meta, the
# dataset and both hashes, as analyze does; the whole dataset, matching its hash, still replays. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o350.XXXXXX); cd "$L"; export XDG_CACHE_HOME=$L/cache
python3 - <<'PY'
import numpy as np, json, hashlib
fs = 2e6; n = 1 << 18; t = np.arange(n) / fs; rng = np.random.default_rng(1)
x = (0.3 * np.exp(2j * np.pi * 100e3 * t) + 0.001 * (rng.normal(size=n) + 1j * rng.normal(size=n))).astype(np.complex64)
b = x.tobytes(); g = {"core:datatype": "cf32_le", "core:sample_rate": fs, "core:version": "1.2.0",
                      "core:sha512": hashlib.sha512(b).hexdigest()}
for name, data in (("whole", b), ("cut", b[:len(b) // 2])):
    open(name + '.sigmf-data', 'wb').write(data)
    json.dump({"global": g, "captures": [{"core:sample_start": 0, "core:frequency": 433.92e6}], "annotations": []},
              open(name + '.sigmf-meta', 'w'))
PY
"$RXN" analyze cut.sigmf-meta > a.txt 2>&1; echo "analyze cut.sigmf-meta: rc=$? $(head -c 200 a.txt)"
run() { "$RXN" --sim capture -d "driver=rxsim,serial=$1,replay=$L/$1.sigmf-meta" -f 433.92M -r 2M -t 0.1 > "c.$1.txt" 2>&1; echo $?; }
r1=$(run whole); r2=$(run cut)
for f in whole cut; do echo "replay $f: $(grep -oE 'rxsim: replay.*|peaks.*|status.*' "c.$f.txt" | tr -s ' ' | tr '\n' ' ' | cut -c1-260)"; done
panics a.txt c.*.txt && { echo "broken: a panic"; exit 0; }
[ "$r1" = 0 ] && grep -qE 'peaks +434.020000 MHz' c.whole.txt || { echo "broken: the whole dataset, matching its hash, no longer replays (rc=$r1)"; exit 0; }
bad=""
[ "$r2" = 0 ] && bad="$bad cut replayed, exit 0 ($(grep status c.cut.txt));"
grep -q "cut.sigmf-meta: core:sha512 does not match the dataset $L/cut.sigmf-data: the meta says [0-9a-f]\{128\}, the data hashes to [0-9a-f]\{128\}" c.cut.txt || bad="$bad not refused naming the meta, the dataset and both hashes;"
[ -n "$bad" ] && { echo "broken: rxsim replays a dataset that does not match its core:sha512:$bad"; exit 0; }; echo held; exit 1
