#!/bin/bash
# o28: wrong statement: `results show ID --plot DIR` when no picture could be drawn or written (a peer's axis refused, a
# read-only or full DIR) says "rx-results/ID/NODE: no pictures in this result" above the reasons — but the result has a
# picture. Expected: "no picture written", the reasons after it. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab o28; published P28 >/dev/null 2>&1
peer_edit P28 "s=d['pictures']['spectra'][0]; s['start_hz']=1e308; s['step_hz']=1e307" >/dev/null 2>&1
"$RXN" --repo "$L/main" results show P28 --plot "$L/plot" > "$L/show.out" 2>&1; rc=$?
echo "results show --plot: rc=$rc"; sed 's/^/  /' "$L/show.out" | head -4
panics "$L/show.out" && { echo "broken: panic"; exit 0; }
grep -q 'no pictures in this result' "$L/show.out" && { echo "broken: a result with a picture that was not written is said to have no pictures"; exit 0; }
grep -q 'no picture written' "$L/show.out" || { echo "broken: it is not said that no picture was written"; exit 0; }
echo held; exit 1
