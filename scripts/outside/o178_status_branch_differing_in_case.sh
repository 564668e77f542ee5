#!/bin/bash
# o178: hostile peer against a node's status: node LAB1 publishes its heartbeat to `rx-status/LAB1`, but a peer has
# pushed `rx-status/lab1` first. On a case-insensitive file system (a Windows or macOS main PC) the two are one ref
# file, so the main PC keeps one tip under the other's name (and now reads neither): the fleet page shows a status
# that is not this node's. The heartbeat pushed anyway and counted it as landed. Expected: each status push is
# refused, naming both branches and the letter case (in `rx_status_push.json`); rx-status/LAB1 never appears.
# Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab statcase; policy "${POL%\}},\"status\":{\"publish_every_s\":0.3}}"; rxn node set-name LAB1 >/dev/null
(cd "$L/main" && G push -q origin HEAD:refs/heads/rx-status/lab1)
timeout -s INT 4 "$RXN" --repo "$L/rx" watch --no-prompt --interval 1 > "$L/w.out" 2>&1
echo "remote branches: $(git -C "$L/origin.git" for-each-ref --format='%(refname:short)' refs/heads | tr '\n' ' ')"
python3 - "$L/rx/.local/rx_status_push.json" <<'PY' > "$L/rec.txt" 2>&1
import json, sys
r = json.load(open(sys.argv[1]))
print("  attempts", r["attempts"], "failures_in_a_row", r["failures_in_a_row"], "last_error:", (r.get("last_error") or "")[:200])
PY
cat "$L/rec.txt"
bad=""
git -C "$L/origin.git" rev-parse -q --verify refs/heads/rx-status/LAB1 >/dev/null && bad="$bad pushed-beside-the-twin"
grep -q 'only in letter case' "$L/rec.txt" || bad="$bad no-reason"
panics "$L/w.out" && bad="$bad panic"
[ -n "$bad" ] && { echo "broken: a node's status is pushed beside a branch that only letter case tells apart:$bad"; exit 0; }; echo held; exit 1
