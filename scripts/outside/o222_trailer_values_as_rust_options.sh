#!/bin/bash
# o222: the main PC verifies a result whose Markdown trailer disagrees with its JSON (a peer set the status in
# RX_RESULT.json to FAIL; the trailer still holds the node's). `results verify` and `validate-result` said
# `trailer status Some("PASS") disagrees with the JSON Some("FAIL")`: Rust's option syntax, not the values, and a
# trailer without the key came out as `None`. Expected: the values quoted as they are (`"PASS"`, whatever the node's status was), `(none)` for an
# absent one. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab trailer; published CAP_1
peer_edit CAP_1 "d['status'] = 'FAIL'"
(cd "$L/main" && "$RXN" results verify CAP_1 > "$L/v.out" 2>&1; echo "verify: rc=$?")
mkdir -p "$L/w"; G -C "$L/main" fetch -q origin rx-node; git -C "$L/main" archive origin/rx-node rx-results | tar -x -C "$L/w"
"$RXN" validate-result "$L/w/rx-results/CAP_1/LAB1/RX_RESULT.json" > "$L/vr.out" 2>&1; echo "validate-result: rc=$?"
grep -h 'trailer' "$L/v.out" "$L/vr.out" | cut -c1-200 | sed 's/^/  /'
bad=""
grep -q 'Some(' "$L/v.out" "$L/vr.out" && bad="$bad rust-option-in-message"
grep -qE 'trailer status "[A-Z ]+" disagrees with the JSON "FAIL"' "$L/v.out" || bad="$bad values-not-quoted"
panics "$L/v.out" "$L/vr.out" && bad="$bad panic"
[ -n "$bad" ] && { echo "broken: a trailer that disagrees with the JSON is named in Rust's option syntax:$bad"; exit 0; }; echo held; exit 1
