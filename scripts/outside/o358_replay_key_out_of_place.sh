#!/bin/bash
# o358: rxsim's replay= found a SigMF meta's keys by searching its text, wherever they stood. A meta whose only
# core:sample_rate (2 MS/s) stands in its capture segment, not in "global" (analyze reads it from global: "no
# core:sample_rate", refused without -r), replayed at 2 MS/s and the capture said PASS; a core:datatype ("cf32_le")
# standing only in an annotation was taken as the dataset's type (analyze: "SigMF meta has no core:datatype").
# Expected (docs/hardware.md#replaying-a-recording-as-a-radio): each key read from its place in the parsed document,
# as analyze reads it; both refused when the radio is made, naming the key and "global"; the same meta with the keys
# in global still replays (its +100 kHz tone at 100.100000 MHz). Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o358.XXXXXX); cd "$L"; export XDG_CACHE_HOME=$L/cache
python3 - <<'PY'
import numpy as np
fs = 2e6; n = 1 << 18; t = np.arange(n) / fs; rng = np.random.default_rng(1)
x = (0.3 * np.exp(2j * np.pi * 100e3 * t) + 0.001 * (rng.normal(size=n) + 1j * rng.normal(size=n))).astype(np.complex64)
metas = {
  "json": '{"global":{"core:datatype":"cf32_le","core:sample_rate":2000000,"core:version":"1.2.0"},'
          '"captures":[{"core:sample_start":0,"core:frequency":100e6}],"annotations":[]}',
  "rate": '{"global":{"core:datatype":"cf32_le","core:version":"1.2.0"},'
          '"captures":[{"core:sample_start":0,"core:frequency":100e6,"core:sample_rate":2000000}],"annotations":[]}',
  "type": '{"global":{"core:sample_rate":2000000,"core:version":"1.2.0"},'
          '"captures":[{"core:sample_start":0,"core:frequency":100e6}],'
          '"annotations":[{"core:sample_start":0,"core:datatype":"cf32_le"}]}',
}
for name, text in metas.items():
    x.tofile(name + '.sigmf-data')
    open(name + '.sigmf-meta', 'w').write(text)
PY
run() { "$RXN" --sim capture -d "driver=rxsim,serial=$1,replay=$L/$1.sigmf-meta" -f 100M -r 2M -t 0.1 > "c.$1.txt" 2>&1; echo $?; }
bad=""
for f in json rate type; do
  "$RXN" analyze "$f.sigmf-meta" > "a.$f.txt" 2>&1; ra=$?
  rc=$(run $f)
  echo "$f: analyze rc=$ra $(grep -m1 -oE 'error: .{0,150}' "a.$f.txt")"
  echo "$f: replay  rc=$rc $(grep -oE 'rxsim: replay.{0,200}|peaks.{0,40}|status.*' "c.$f.txt" | tr -s ' ' | tr '\n' ' ' | cut -c1-300)"
  [ $f = json ] && continue
  [ "$ra" = 0 ] && { echo "broken: analyze now reads the $f meta (rc=0): the two readers' rule changed"; exit 0; }
  [ "$rc" = 0 ] && bad="$bad $f replayed, exit 0 ($(grep -m1 -oE 'peaks +[0-9.]+ MHz' "c.$f.txt"));"
  [ "$rc" != 0 ] && ! grep -qE 'has no core:(sample_rate|datatype) in its "global" object' "c.$f.txt" && bad="$bad $f refused without naming the key and global;"
done
panics a.*.txt c.*.txt && { echo "broken: a panic"; exit 0; }
grep -qE 'peaks +100.100000 MHz' c.json.txt || { echo "broken: the meta with its keys in global no longer replays"; exit 0; }
[ -n "$bad" ] && { echo "broken: rxsim reads a key analyze does not see, from the wrong place:$bad"; exit 0; }; echo held; exit 1
