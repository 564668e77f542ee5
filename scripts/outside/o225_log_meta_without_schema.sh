#!/bin/bash
# o225: the main PC checks every JSON file a node publishes against the schemas rxnode prints, with python3
# jsonschema as an outside client. RX_RESULT.json has `rxnode schema result` and STATUS.json `rxnode schema status`,
# but LOG_META.json, the third file of every published result, had none: `rxnode schema log-meta` was "invalid
# value" (exit 2) and no kind named it. Expected: `rxnode schema log-meta` prints a closed schema that the published
# file validates against and a file of another version or with an unknown key fails. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab logmeta; published CAP_1
git -C "$L/origin.git" show rx-node:rx-results/CAP_1/LAB1/LOG_META.json > "$L/meta.json"
echo "LOG_META.json keys: $(python3 -c "import json,sys; print(list(json.load(open(sys.argv[1]))))" "$L/meta.json")"
"$RXN" schema log-meta > "$L/s.json" 2> "$L/s.err"; rc=$?; echo "schema log-meta: rc=$rc $(head -c 200 "$L/s.err")"
got=$(python3 - "$L/s.json" "$L/meta.json" <<'PY' 2>&1
import json, sys, jsonschema
try:
    s = json.load(open(sys.argv[1]))
except Exception as e:
    print("no-schema"); sys.exit()
d = json.load(open(sys.argv[2])); v = jsonschema.Draft202012Validator(s)
ok = not list(v.iter_errors(d))
d2 = dict(d, schema_version=2); d3 = dict(d, extra=1)
print("published-valid" if ok else "published-invalid:" + next(v.iter_errors(d)).message,
      "v2-" + ("fails" if list(v.iter_errors(d2)) else "passes"),
      "extra-" + ("fails" if list(v.iter_errors(d3)) else "passes"))
PY
)
echo "jsonschema: $got"
bad=""
[ "$rc" = 0 ] || bad="$bad no-log-meta-schema"
[ "$got" = "published-valid v2-fails extra-fails" ] || bad="$bad ($got)"
panics "$L/s.err" && bad="$bad panic"
[ -n "$bad" ] && { echo "broken: LOG_META.json, published with every result, has no schema to check it against:$bad"; exit 0; }; echo held; exit 1
