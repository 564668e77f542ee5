#!/bin/bash
# o177: hostile peer against the main PC's listing: after node LAB1 publishes CAP_1, a peer pushes a copy of it as
# task `cap_1` (`rx-results/cap_1/LAB1/`, the JSON, Markdown and LOG_META made to agree) straight onto rx-node. rxnode
# reads trees, so both are listed, but anyone who checks out rx-node on Windows or macOS gets one folder holding
# whichever Git wrote last. `results` listed both without a word. Expected: the listing names the pair as differing
# only in letter case (both rows are kept: the tree holds both). Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab listcase; published CAP_1
peer_copy CAP_1 cap_1 'pass' 'pass'
echo "rx-node folders: $(git -C "$L/origin.git" ls-tree -d --name-only rx-node rx-results/ | tr '\n' ' ')"
(cd "$L/main" && "$RXN" results > "$L/r.out" 2> "$L/r.err"); rc=$?
echo "results: rc=$rc"; cut -c1-200 "$L/r.out" | sed 's/^/  /'
bad=""
grep -q 'rx-results/CAP_1 and rx-results/cap_1 differ only in letter case' "$L/r.out" "$L/r.err" || bad="$bad twin-not-named"
panics "$L/r.out" "$L/r.err" && bad="$bad panic"
[ -n "$bad" ] && { echo "broken: results folders that only letter case tells apart are listed without a word:$bad"; exit 0; }; echo held; exit 1
