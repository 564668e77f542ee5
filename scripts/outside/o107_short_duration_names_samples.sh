#!/bin/bash
# o107: unclear error: `capture -t 1e-9` (less than one sample at 2 MS/s) was refused by the capture engine as
# "invalid setting samples: a capture must ask for at least one sample", exit 1, after the radio was opened: it named
# an internal setting the operator never typed and not the value given. Expected: refused before the radio opens
# (exit 2) naming --duration-s and its value (a plan step: its `duration_s`, as `rxnode validate` already does).
source "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o107.XXXXXX); cd "$L"
"$RXN" --sim capture -d driver=rxsim -f 100M -r 2M -t 1e-9 > c.txt 2>&1; rc=$?; echo "capture -t 1e-9: rc=$rc: $(cat c.txt)"
"$RXN" --sim --json capture -d driver=rxsim -f 100M -r 2M -t 1e-9 > j.txt 2>&1; echo "--json: $(cat j.txt)"
panics c.txt j.txt && { echo "broken: a panic"; exit 0; }
grep -q 'invalid setting samples' c.txt && { echo "broken: the refusal names the internal setting 'samples', not --duration-s"; exit 0; }
grep -q -- '--duration-s 0.000000001' c.txt || { echo "broken: the refusal does not name --duration-s and its value"; exit 0; }
[ $rc -eq 2 ] || { echo "broken: exit $rc, not 2 (a bad argument)"; exit 0; }
grep -q -- '--duration-s 0.000000001' j.txt || { echo "broken: the JSON error does not name --duration-s and its value"; exit 0; }
echo held; exit 1
