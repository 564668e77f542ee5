#!/bin/bash
# o171: hostile branch against the node's folders: the main PC posts task T1, then a task t1 — an ID that differs
# only in letter case. Both were accepted as two tasks, yet on a case-insensitive file system (Windows, macOS, or a
# checkout moved to such a laptop) `.local/rx_agent_outbox/T1/` and `.local/rx_agent_outbox/t1/` are one folder
# (and so are `rx_iq/` and `rx-results/`): one task's results overwrite or pass for the other's. Expected: the
# second is refused when it is examined, naming both IDs and the letter case; it is never prompted.
# Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab caseid; policy
cap='{"op":"rx_capture","device":"driver=rxsim","frequency_hz":100e6,"sample_rate_hz":2e6,"gain_db":20,"duration_s":0.2}'
{ hdr CASE_A YES YES NO; plan "$cap"; } | post; approve; echo "CASE_A: $(grep -m1 -oE 'approved|refused|rejected' "$L/watch.out")"
{ hdr case_a YES YES NO; plan "$cap"; } | post
echo A | rxn watch --once --interval 0.2 > "$L/w2.out" 2>&1; rc=$?; echo "watch on case_a: rc=$rc"; sed 's/^/  /' "$L/w2.out" | head -5
rxn status --json > "$L/st.json" 2>&1
bad=""
python3 - "$L/rx/.local/rx_agent_state.json" <<'PY' && bad="$bad both-accepted"
import json, sys
t = json.load(open(sys.argv[1]))["tasks"]
print("  state tasks:", {k: v["status"] for k, v in t.items()})
sys.exit(0 if "case_a" in t and "CASE_A" in t else 1)
PY
grep -q 'case_a' "$L/w2.out" && grep -q 'CASE_A' "$L/w2.out" && grep -qi 'letter case' "$L/w2.out" || bad="$bad no-message-naming-both"
panics "$L/w2.out" && bad="$bad panic"
[ -n "$bad" ] && { echo "broken: two task IDs that differ only in letter case are two tasks sharing one folder on a case-insensitive file system:$bad"; exit 0; }; echo held; exit 1
