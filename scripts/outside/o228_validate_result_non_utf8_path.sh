#!/bin/bash
# o228: the main PC keeps results it pulled in folders named after their origin; one folder name is not UTF-8 (a
# Latin-1 byte from an old archive, legal in any Unix path). `rxnode validate-result <that folder>/RX_RESULT.json`
# refused the argument as "invalid UTF-8 was detected in one or more arguments" (exit 2), naming neither the
# argument nor the file, while every other path flag of rxnode takes such a path. Expected: the result validated
# (exit 0 for a valid one), the path read as given. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab nonutf8; published CAP_1
D="$L/$(printf 'lab\xfe')"; mkdir -p "$D"
for f in RX_RESULT.json RX_RESULT.md; do git -C "$L/origin.git" show "rx-node:rx-results/CAP_1/LAB1/$f" > "$D/$f"; done
(cd "$L/main" && "$RXN" validate-result "$L/peer/rx-results/CAP_1/LAB1/RX_RESULT.json" > "$L/u.out" 2>&1); echo "same result in a UTF-8 folder: rc=$? $(head -c 120 "$L/u.out")"
(cd "$L/main" && "$RXN" validate-result "$D/RX_RESULT.json" > "$L/n.out" 2>&1); rc=$?; echo "in the non-UTF-8 folder: rc=$rc $(head -c 200 "$L/n.out")"
(cd "$L/main" && "$RXN" --json validate-result "$D" > "$L/j.out" 2>&1); rcj=$?; echo "--json on the folder: rc=$rcj $(tr -d '\n' < "$L/j.out" | head -c 200)"
bad=""
grep -q 'invalid UTF-8 was detected' "$L/n.out" "$L/j.out" && bad="$bad argument-refused"
[ "$rc" = 0 ] && [ "$rcj" = 0 ] || bad="$bad rc=$rc/$rcj"
panics "$L/n.out" "$L/j.out" && bad="$bad panic"
[ -n "$bad" ] && { echo "broken: validate-result refuses a path that is not UTF-8 without naming it:$bad"; exit 0; }; echo held; exit 1
