#!/bin/bash
# o176: hostile peer against a node on its own results branch: node LAB1 publishes to `rx-results/LAB1`
# (`node set-publish-ref own`), but a peer has pushed `rx-results/lab1` first. On a case-insensitive file system (a
# Windows or macOS main PC) the two are one ref file, so the main PC keeps one tip under the other's name (and now
# reads neither): LAB1's result is lost there. `publish --push` pushed anyway and said it was published. Expected:
# refused before anything is pushed, naming both branches and the letter case. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab owncase; policy; rxn node set-name LAB1 >/dev/null; rxn node set-publish-ref own >/dev/null
{ hdr OWN_1 YES YES NO; plan '{"op":"rx_capture","device":"driver=rxsim","frequency_hz":100e6,"sample_rate_hz":2e6,"gain_db":20,"duration_s":0.2}'; } | post; approve
rxn --sim run OWN_1 > "$L/run.out" 2>&1; echo "run OWN_1: rc=$?"
(cd "$L/main" && G push -q origin HEAD:refs/heads/rx-results/lab1)
echo "PUBLISH OWN_1" | rxn publish OWN_1 --push > "$L/pub.out" 2>&1; rc=$?
echo "publish: rc=$rc"; grep -m1 -iE 'letter case|published|pushed' "$L/pub.out" | cut -c1-250 | sed 's/^/  /'
echo "remote branches: $(git -C "$L/origin.git" for-each-ref --format='%(refname:short)' refs/heads | tr '\n' ' ')"
bad=""
git -C "$L/origin.git" rev-parse -q --verify refs/heads/rx-results/LAB1 >/dev/null && bad="$bad pushed-beside-the-twin"
grep -qi 'letter case' "$L/pub.out" || bad="$bad no-message"
panics "$L/pub.out" && bad="$bad panic"
[ -n "$bad" ] && { echo "broken: a node publishes to its own branch beside one that only letter case tells apart:$bad"; exit 0; }; echo held; exit 1
