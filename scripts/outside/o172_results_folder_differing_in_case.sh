#!/bin/bash
# o172: hostile peer against the results branch: before node LAB1 publishes task CAP_1, another publisher pushes
# `rx-results/CAP_1/lab1/` (a node name that differs only in letter case) to rx-node, and in a second lab
# `rx-results/cap_1/LAB1/` (a task ID that differs only in letter case). Git keeps both folders apart, but a
# checkout of rx-node on a case-insensitive file system (Windows, macOS) makes them one: one result overwrites or
# passes for the other. `publish --push` added its result beside the twin. Expected: the publication is refused,
# naming both folders and the letter case; rx-node holds no result of LAB1. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
bad=""
for twin in CAP_1/lab1 cap_1/LAB1; do
  newlab pubcase; policy; rxn node set-name LAB1 >/dev/null
  { hdr CAP_1 YES YES NO; plan '{"op":"rx_capture","device":"driver=rxsim","frequency_hz":100e6,"sample_rate_hz":2e6,"gain_db":20,"duration_s":0.2}'; } | post; approve
  rxn --sim run CAP_1 > "$L/run.out" 2>&1; echo "run CAP_1: rc=$?"
  G clone -q "$L/origin.git" "$L/peer" 2>/dev/null
  (cd "$L/peer" && G checkout -q --orphan rx-node && { G rm -rqf --ignore-unmatch . >/dev/null; true; } && mkdir -p "rx-results/$twin" \
     && echo '{}' > "rx-results/$twin/RX_RESULT.json" && G add -A && G commit -qm "rx-results: $twin" && G push -q origin rx-node)
  echo "PUBLISH CAP_1" | rxn publish CAP_1 --push > "$L/pub.out" 2>&1; rc=$?
  echo "twin rx-results/$twin/: publish rc=$rc"; grep -m1 -iE 'letter case|published|pushed' "$L/pub.out" | cut -c1-300 | sed 's/^/  /'
  echo "  rx-node on the remote: $(git -C "$L/origin.git" ls-tree -r --name-only rx-node | grep -c RX_RESULT) result file(s):" \
       "$(git -C "$L/origin.git" ls-tree -d --name-only -r rx-node rx-results | tr '\n' ' ')"
  git -C "$L/origin.git" ls-tree -r --name-only rx-node | grep -q 'CAP_1/LAB1/' && bad="$bad published-beside-$twin"
  grep -qi 'letter case' "$L/pub.out" || bad="$bad no-message-$twin"
  panics "$L/pub.out" && bad="$bad panic"
done
[ -n "$bad" ] && { echo "broken: a result is published beside a folder that only letter case tells apart:$bad"; exit 0; }; echo held; exit 1
