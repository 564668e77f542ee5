#!/bin/bash
# o19: unclear error on the operator's own file: `.local/rxnode-policy.json` saved with a UTF-8 byte-order mark (what
# Windows Notepad wrote before Windows 10 1903, and what PowerShell 5's `Out-File -Encoding utf8` still writes; rxnode
# ships for Windows) is refused as "invalid policy: expected value at line 1 column 1": the operator sees a valid JSON
# file in the editor and no word about the invisible BOM. Task files accept a BOM (fixtures/valid_bom_crlf_tight.md).
# Expected: accepted, or refused naming the BOM. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab polmark; rxn node set-name LAB1 >/dev/null
printf '\xef\xbb\xbf{"rx": {"max_duration_s": 10, "max_gain_db": 50}}\r\n' > "$L/rx/.local/rxnode-policy.json"; chmod 600 "$L/rx/.local/rxnode-policy.json"
rxn --sim capture -d driver=rxsim -f 100M -r 2M -t 0.05 -g 20 > "$L/out" 2>&1; rc=$?
echo "capture rc=$rc: $(grep -E 'error|status' "$L/out" | head -1)"
rxn doctor 2>&1 | grep -i 'policy' | head -2
[ $rc -ne 0 ] && grep -q 'line 1 column 1' "$L/out" && ! grep -q 'BOM\|byte.order\|U+FEFF\|FEFF' "$L/out" && { echo "broken: a BOM-prefixed policy is refused without naming the BOM"; exit 0; }; echo held; exit 1
