#!/bin/bash
# o357: a SigMF recording declaring in core:extensions an extension rxnode does not know with "optional": false (SigMF
# 1.2: "the application MUST support this extension in order to parse the Recording; if [it] does not support this
# extension, it SHOULD report an error": such an extension may change what the samples mean) was analysed as if the
# extension were not there, a confident report and exit 0; rxsim's replay= of it said PASS.
# Expected (docs/operator.md#analysing-a-recording): refused by both, naming the extension; the same recording with the
# extension declared "optional": true still reads. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o357.XXXXXX); cd "$L"; export XDG_CACHE_HOME=$L/cache
python3 - <<'PY'
import numpy as np, json
fs = 2e6; n = 1 << 18; t = np.arange(n) / fs; rng = np.random.default_rng(1)
x = (0.3 * np.exp(2j * np.pi * 100e3 * t) + 0.001 * (rng.normal(size=n) + 1j * rng.normal(size=n))).astype(np.complex64)
for name, optional in (("optional", True), ("required", False)):
    x.tofile(name + ".sigmf-data")
    json.dump({"global": {"core:datatype": "cf32_le", "core:sample_rate": 2e6, "core:version": "1.2.0",
                          "core:extensions": [{"name": "acme_inverted", "version": "1.0.0", "optional": optional}],
                          "acme_inverted:spectrum": "inverted"},
               "captures": [{"core:sample_start": 0, "core:frequency": 100e6}], "annotations": []},
              open(name + ".sigmf-meta", "w"))
PY
for f in optional required; do
  "$RXN" analyze "$f.sigmf-meta" > "a.$f.txt" 2>&1; echo "$f: analyze rc=$? $(grep -m1 -oE 'error: .{0,200}|peaks.{0,30}' "a.$f.txt")"
  "$RXN" --sim capture -d "driver=rxsim,serial=$f,replay=$L/$f.sigmf-meta" -f 100M -r 2M -t 0.1 > "c.$f.txt" 2>&1
  echo "$f: replay  rc=$? $(grep -oE 'rxsim: replay.{0,160}|peaks.{0,30}|status.*' "c.$f.txt" | tr -s ' ' | tr '\n' ' ' | cut -c1-260)"
done
panics a.*.txt c.*.txt && { echo "broken: a panic"; exit 0; }
grep -q 'peaks' a.optional.txt && grep -qE 'peaks +100.100000 MHz' c.optional.txt || { echo "broken: the optional extension no longer reads"; exit 0; }
bad=""
grep -q 'peaks' a.required.txt && bad="$bad analyze reported it, exit 0;"
grep -q 'declares the extension "acme_inverted"' a.required.txt || bad="$bad analyze does not name the extension;"
grep -q 'status' c.required.txt && bad="$bad rxsim replayed it ($(grep -m1 -oE 'status.*' c.required.txt));"
grep -q 'declares the extension "acme_inverted"' c.required.txt || bad="$bad rxsim does not name the extension;"
[ -n "$bad" ] && { echo "broken: a required extension rxnode does not know is ignored:$bad"; exit 0; }; echo held; exit 1
