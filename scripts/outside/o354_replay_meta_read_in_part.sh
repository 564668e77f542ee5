#!/bin/bash
# o354: rxsim's replay= read a SigMF meta only up to its first 16 MiB and went on with what it had: a meta whose
# core:description is 16.1 MB long (any long text or annotation list will do) has its core:sha512 past the cut, so a
# dataset cut to half its samples under that hash, which `rxnode analyze` refuses ("core:sha512 does not match the
# dataset"), was replayed unchecked, capture PASS.
# Expected (docs/hardware.md#replaying-a-recording-as-a-radio): a meta larger than 16 MiB is refused naming its size
# limit, never read in part; the same meta with a short description is checked and refused for its hash. Exit 0 = defect.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o354.XXXXXX); cd "$L"; export XDG_CACHE_HOME=$L/cache
python3 - <<'PY'
import numpy as np, hashlib
fs = 2e6; n = 1 << 18; t = np.arange(n) / fs; rng = np.random.default_rng(1)
b = (0.3 * np.exp(2j * np.pi * 100e3 * t) + 0.001 * (rng.normal(size=n) + 1j * rng.normal(size=n))).astype(np.complex64).tobytes()
for name, pad in (("short", 10), ("long", (1 << 24) + 100000)):
    open(name + '.sigmf-data', 'wb').write(b[:len(b) // 2])
    open(name + '.sigmf-meta', 'w').write(
        '{"captures": [{"core:sample_start": 0, "core:frequency": 433920000.0}], "annotations": [], '
        '"global": {"core:datatype": "cf32_le", "core:sample_rate": 2000000, "core:version": "1.2.0", '
        '"core:description": "' + 'x' * pad + '", "core:sha512": "' + hashlib.sha512(b).hexdigest() + '"}}')
PY
"$RXN" analyze long.sigmf-meta > a.txt 2>&1; echo "analyze long.sigmf-meta: rc=$? $(head -c 160 a.txt)"
run() { "$RXN" --sim capture -d "driver=rxsim,serial=$1,replay=$L/$1.sigmf-meta" -f 433.92M -r 2M -t 0.1 > "c.$1.txt" 2>&1; echo $?; }
r1=$(run short); r2=$(run long)
for f in short long; do echo "replay $f: $(grep -oE 'rxsim: replay.*|peaks.*|status.*' "c.$f.txt" | tr -s ' ' | tr '\n' ' ' | cut -c1-240)"; done
panics a.txt c.*.txt && { echo "broken: a panic"; exit 0; }
bad=""
[ "$r1" = 0 ] && bad="$bad the short meta's hash mismatch replayed;"
[ "$r2" = 0 ] && bad="$bad the 16 MiB+ meta replayed, its core:sha512 unread, exit 0 ($(grep status c.long.txt));"
grep -q 'long.sigmf-meta is larger than 16777216 bytes' c.long.txt || bad="$bad the long meta not refused naming its size;"
[ -n "$bad" ] && { echo "broken: rxsim replays what it read of a meta in part:$bad"; exit 0; }; echo held; exit 1
