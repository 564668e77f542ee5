#!/bin/bash
# o224: a node with another rxnode (a newer format) pushes a heartbeat whose STATUS.json says `"schema_version": 2`.
# `results nodes` read it as version 1 and listed the node ALIVE with its fields taken as version 1's, without a
# word; `rxnode schema status` accepted any version though its description says 1 (python3 jsonschema passed it).
# Expected: the status refused naming the version (the node not alive, the problem listed), and the schema holding
# schema_version to 1. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab statusver
mkdir -p "$L/st" && cd "$L/st" && G init -q && python3 - <<'PY'
import datetime, json
t = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='milliseconds')
d = {"schema_version": 2, "node": "LAB9", "rxnode_version": "9.0.0", "time": t, "publish_every_s": 300.0,
     "watcher": "running", "last_poll": None, "queue": {"pending_approval": 0, "deferred": 0, "approved": 0,
     "pending": [], "running": None}, "refusals": [], "radios": [], "calibration": []}
open('STATUS.json', 'w').write(json.dumps(d))
PY
G add -A && G commit -qm status && G push -q "$L/origin.git" HEAD:refs/heads/rx-status/LAB9
cd "$L/main"
"$RXN" results nodes > "$L/n.out" 2>&1; echo "results nodes: rc=$?"; grep -A3 '^LAB9' "$L/n.out" | sed 's/^/  /'
"$RXN" --json results nodes > "$L/n.json" 2>>"$L/n.out"
got=$(python3 -c "import json,sys; print([(n['state'], n['problems']) for n in json.load(open(sys.argv[1]))['nodes'] if n['node']=='LAB9'])" "$L/n.json")
echo "JSON: $got"
"$RXN" schema status > "$L/status.schema.json"
schema=$(python3 -c "
import json, sys, jsonschema
s = json.load(open(sys.argv[1])); d = json.loads(open(sys.argv[2]).read())
print(len(list(jsonschema.Draft202012Validator(s).iter_errors(d))))" "$L/status.schema.json" "$L/st/STATUS.json" 2>&1)
echo "jsonschema errors for schema_version 2: $schema"
bad=""
case "$got" in *alive*) bad="$bad listed-alive";; esac
case "$got" in *"schema_version 2"*) ;; *) bad="$bad version-not-named";; esac
[ "$schema" = 0 ] && bad="$bad schema-accepts-2"
panics "$L/n.out" && bad="$bad panic"
[ -n "$bad" ] && { echo "broken: a status of another schema_version is read as version 1:$bad"; exit 0; }; echo held; exit 1
