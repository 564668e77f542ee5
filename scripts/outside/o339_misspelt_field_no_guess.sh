#!/bin/bash
# o339: a task header with a misspelt field (`RF_RXX = YES`) was reported as two unrelated issues,
# `missing required field RF_RX` and `unknown field "RF_RXX"`, without saying the second is the first misspelt.
# Expected: the unknown field's message says `did you mean RF_RX?` (the one known field within two edits);
# `POWER_W` (near none) gets no guess. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab o339
hdr O339 YES YES NO | sed 's/^RF_RX = /RF_RXX = /' > "$L/t.md"; echo 'POWER_W = 5' >> "$L/t.md"; plan '{"op":"inventory"}' >> "$L/t.md"
"$RXN" --json validate "$L/t.md" > "$L/v.json" 2>&1; echo "validate: rc=$?"
panics "$L/v.json" && { echo "broken: panic"; exit 0; }
python3 - "$L/v.json" <<'PY'
import json, re, sys
t = open(sys.argv[1]).read(); print(" " + t[:900])
msgs = re.findall(r'"message":\s*"((?:[^"\\]|\\.)*)"', t)
rf = [m for m in msgs if 'RF_RXX' in m]; pw = [m for m in msgs if 'POWER_W' in m]
ok = any('did you mean RF_RX?' in m for m in rf) and pw and not any('did you mean' in m for m in pw)
sys.exit(0 if ok else 1)
PY
[ $? = 0 ] || { echo "broken: a misspelt header field RF_RXX is not tied to RF_RX (no \"did you mean RF_RX?\")"; exit 0; }
echo held; exit 1
