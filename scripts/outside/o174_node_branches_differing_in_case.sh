#!/bin/bash
# o174: hostile peer against the main PC's results: besides node LAB1's results branch `rx-results/LAB1`, a peer
# pushes `rx-results/lab1` (here the same commit). On a case-insensitive file system (a Windows or macOS main PC)
# the two are one loose ref file, so a fetch keeps one branch's tip under the other's name and one node's results
# are lost or shown as the other's. `results` read both without a word. Expected (by the rule, on any OS): a
# warning names both branches and says why, neither is read; rx-node is still read. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab refcase; published CAP_1
(cd "$L/peer" && G push -q origin rx-node:rx-results/LAB1 && G push -q origin rx-node:rx-results/lab1)
echo "remote branches: $(git -C "$L/origin.git" for-each-ref --format='%(refname:short)' refs/heads | tr '\n' ' ')"
(cd "$L/main" && "$RXN" results > "$L/r.out" 2> "$L/r.err"); rc=$?
echo "results: rc=$rc"; sed 's/^/  /' "$L/r.err" | cut -c1-250; head -3 "$L/r.out" | sed 's/^/  /' | cut -c1-160
bad=""
grep -q 'rx-results/LAB1 and rx-results/lab1' "$L/r.err" && grep -q 'letter case' "$L/r.err" || bad="$bad no-warning-naming-both"
grep -qE ' 2 node branch' "$L/r.out" && bad="$bad both-read"
panics "$L/r.out" "$L/r.err" && bad="$bad panic"
[ -n "$bad" ] && { echo "broken: two node branches that differ only in letter case are read as two:$bad"; exit 0; }; echo held; exit 1
