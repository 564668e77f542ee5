#!/bin/bash
# o338: a node policy with a trailing comma (`{"rx": {"max_duration_s": 10,},}`) was named with its line and column,
# but `--json` gave `"fix": null`, while doctor's policy check said `repair .local/rxnode-policy.json (docs/operator.md
# shows the fields)`. Expected: the command's error carries that same fix (with the file's path), and doctor's check
# the same fix. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab o338; echo '/.local/' >> "$L/rx/.git/info/exclude"
printf '{"rx": {"max_duration_s": 10,},\n}\n' > "$L/rx/.local/rxnode-policy.json"; chmod 600 "$L/rx/.local/rxnode-policy.json"
rxn --sim --json capture -d driver=rxsim -f 100M -r 1M -t 0.1 > "$L/cap.out" 2> "$L/cap.err"; echo "capture: rc=$?"; cat "$L/cap.err"
rxn --json doctor > "$L/doc.json" 2>&1; echo "doctor: rc=$?"
panics "$L/cap.err" "$L/doc.json" && { echo "broken: panic"; exit 0; }
python3 - "$L/cap.err" "$L/doc.json" <<'PY'
import json, sys
e = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])["error"]
d = [c for c in json.load(open(sys.argv[2]))["checks"] if c["name"] == "policy"][0]
print(" command fix:", e.get("fix")); print(" doctor fix: ", d.get("fix"))
ok = ("trailing comma at line 1 column" in e.get("message", "") and e.get("fix")
      and e["fix"].startswith("repair ") and e["fix"].endswith("(docs/operator.md shows the fields)")
      and d.get("fix", "").startswith("repair ") and d["fix"].endswith("(docs/operator.md shows the fields)"))
sys.exit(0 if ok else 1)
PY
[ $? = 0 ] || { echo "broken: a policy parse error names no fix under --json (\"fix\": null)"; exit 0; }
echo held; exit 1
