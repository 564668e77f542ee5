#!/bin/bash
# o226: a script on the main PC parses every time `results nodes --json` prints with one rule (Python 3.10's
# datetime.fromisoformat, or a match on `+00:00` as every record writes). `last_result_landed_at` alone came out as
# `2026-12-07T06:56:25Z` beside `last_result_at` `2026-12-07T06:56:24+00:00`: fromisoformat before Python 3.11
# refuses the `Z`. Expected: the landing time in the form of every other time (`+00:00`). Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab landedform; published CAP_1
(cd "$L/main" && "$RXN" --json results nodes > "$L/n.json" 2> "$L/n.err"); echo "results nodes: rc=$?"
got=$(python3 -c "
import json, sys
n = [n for n in json.load(open(sys.argv[1]))['nodes'] if n['node'] == 'LAB1'][0]
print(n['last_result_at'], n['last_result_landed_at'])" "$L/n.json")
echo "last_result_at, last_result_landed_at: $got"
bad=""
for t in $got; do case "$t" in *+00:00) ;; *) bad="$bad $t";; esac; done
panics "$L/n.json" "$L/n.err" && bad="$bad panic"
[ -n "$bad" ] && { echo "broken: results nodes prints a time in another form than the others:$bad"; exit 0; }; echo held; exit 1
