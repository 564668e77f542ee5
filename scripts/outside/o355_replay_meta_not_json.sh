#!/bin/bash
# o355: rxsim's replay= read a SigMF meta's keys by a laxer look than `rxnode analyze`: it searched the text for each
# key and read its value with C's strtod, which takes `0x1E8480` (hex) as 2 000 000. A meta whose core:sample_rate is
# written `0x1E8480` (no JSON: `analyze` refuses it, "invalid SigMF meta JSON") replayed at 2 MS/s and the capture
# said PASS; so did one whose centre is `0x5F5E100` (100 MHz), one saved with a UTF-8 byte order mark (refused by
# analyze and by the sigmf package) and one whose annotation edge is `Infinity`.
# Expected (docs/hardware.md#replaying-a-recording-as-a-radio): one rule for both readers: each refused when the radio
# is made, naming what is not JSON; the same meta written as JSON still replays. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o355.XXXXXX); cd "$L"; export XDG_CACHE_HOME=$L/cache
python3 - <<'PY'
import numpy as np
fs = 2e6; n = 1 << 18; t = np.arange(n) / fs; rng = np.random.default_rng(1)
x = (0.3 * np.exp(2j * np.pi * 100e3 * t) + 0.001 * (rng.normal(size=n) + 1j * rng.normal(size=n))).astype(np.complex64)
plain = ('{"global": {"core:datatype": "cf32_le", "core:sample_rate": 2000000, "core:version": "1.2.0"}, '
         '"captures": [{"core:sample_start": 0, "core:frequency": 100e6}], "annotations": []}')
metas = {"json": plain, "hexrate": plain.replace("2000000", "0x1E8480"),
         "hexfreq": plain.replace("100e6", "0x5F5E100"), "bom": "\ufeff" + plain,
         "inf": plain.replace('"annotations": []', '"annotations": [{"core:sample_start": 0, "core:freq_lower_edge": Infinity}]')}
for name, text in metas.items():
    x.tofile(name + '.sigmf-data')
    open(name + '.sigmf-meta', 'w', encoding='utf-8').write(text)
PY
run() { "$RXN" --sim capture -d "driver=rxsim,serial=$1,replay=$L/$1.sigmf-meta" -f 100M -r 2M -t 0.1 > "c.$1.txt" 2>&1; echo $?; }
bad=""
for f in json hexrate hexfreq bom inf; do
  "$RXN" analyze "$f.sigmf-meta" > "a.$f.txt" 2>&1; ra=$?
  rc=$(run $f)
  echo "$f: analyze rc=$ra $(grep -m1 -oE 'error: .{0,150}' "a.$f.txt")"
  echo "$f: replay  rc=$rc $(grep -oE 'rxsim: replay.{0,160}|peaks.{0,40}|status.*' "c.$f.txt" | tr -s ' ' | tr '\n' ' ' | cut -c1-260)"
  [ $f = json ] && continue
  [ "$ra" = 2 ] || { echo "broken: analyze no longer refuses the $f meta (rc=$ra)"; exit 0; }
  [ "$rc" = 0 ] && bad="$bad $f replayed, exit 0 ($(grep -m1 -oE 'peaks +[0-9.]+ MHz' "c.$f.txt"));"
  [ "$rc" != 0 ] && ! grep -q 'analyze refuses it too' "c.$f.txt" && bad="$bad $f refused without naming why;"
done
panics a.*.txt c.*.txt && { echo "broken: a panic"; exit 0; }
grep -qE 'peaks +100.100000 MHz' c.json.txt || { echo "broken: the meta written as JSON no longer replays"; exit 0; }
[ -n "$bad" ] && { echo "broken: rxsim replays a meta analyze refuses as no JSON:$bad"; exit 0; }; echo held; exit 1
