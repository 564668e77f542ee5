#!/bin/bash
# o376: rxsim's replay= checked a SigMF meta as JSON by a rule laxer than `rxnode analyze`'s on one point: a number
# past the largest double (`1e999`, an annotation's core:freq_lower_edge) is JSON's grammar but serde_json refuses
# it ("number out of range"), so `analyze` refused the recording while rxsim replayed it and the capture said PASS.
# Expected (docs/hardware.md#replaying-a-recording-as-a-radio): one rule: refused when the radio is made, naming
# the key; the same meta without it still replays. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o376.XXXXXX); cd "$L"; export XDG_CACHE_HOME=$L/cache
python3 - <<'PY'
import numpy as np
fs = 2e6; n = 1 << 18; t = np.arange(n) / fs; rng = np.random.default_rng(1)
x = (0.3 * np.exp(2j * np.pi * 100e3 * t) + 0.001 * (rng.normal(size=n) + 1j * rng.normal(size=n))).astype(np.complex64)
plain = ('{"global": {"core:datatype": "cf32_le", "core:sample_rate": 2000000, "core:version": "1.2.0"}, '
         '"captures": [{"core:sample_start": 0, "core:frequency": 100e6}], "annotations": []}')
metas = {"json": plain,
         "huge": plain.replace('"annotations": []', '"annotations": [{"core:sample_start": 0, "core:freq_lower_edge": 1e999}]')}
for name, text in metas.items():
    x.tofile(name + '.sigmf-data')
    open(name + '.sigmf-meta', 'w').write(text)
PY
run() { "$RXN" --sim capture -d "driver=rxsim,serial=$1,replay=$L/$1.sigmf-meta" -f 100M -r 2M -t 0.1 > "c.$1.txt" 2>&1; echo $?; }
for f in json huge; do
  "$RXN" analyze "$f.sigmf-meta" > "a.$f.txt" 2>&1; eval "ra_$f=$?"
  eval "rc_$f=$(run $f)"
  echo "$f: analyze rc=$(eval echo \$ra_$f) $(grep -m1 -oE 'error: .{0,120}' "a.$f.txt")"
  echo "$f: replay  rc=$(eval echo \$rc_$f) $(grep -oE 'rxsim: replay.{0,180}|peaks.{0,40}|status.*' "c.$f.txt" | tr -s ' ' | tr '\n' ' ' | cut -c1-260)"
done
panics a.*.txt c.*.txt && { echo "broken: a panic"; exit 0; }
grep -qE 'peaks +100.100000 MHz' c.json.txt || { echo "broken: the meta without 1e999 no longer replays"; exit 0; }
[ "$ra_huge" = 2 ] || { echo "broken: analyze no longer refuses 1e999 (rc=$ra_huge)"; exit 0; }
[ "$rc_huge" = 0 ] && { echo "broken: rxsim replayed a meta analyze refuses (number out of range), exit 0, $(grep -m1 -oE 'status.*' c.huge.txt)"; exit 0; }
grep -q 'core:freq_lower_edge" is a number out of range' c.huge.txt || { echo "broken: refused without naming the key"; exit 0; }
echo held; exit 1
