#!/usr/bin/env python3
"""Validate JSON instances against rxnode's JSON Schemas with the independent
Python `jsonschema` package (draft 2020-12), for tests/mainpc.rs.

stdin:  {"schemas": {"plan": {...}, ...}, "cases": [{"name": ..., "schema": "plan", "instance": ...}]}
stdout: [{"name": ..., "valid": true|false, "errors": ["path: message", ...]}]
Exit 3 when `jsonschema` is missing: the calling test fails (it never skips).
"""
import json
import sys

try:
    import jsonschema
except ImportError:
    print("the Python package `jsonschema` is missing: pip install jsonschema "
          "(scripts/setup.sh installs it)", file=sys.stderr)
    sys.exit(3)

req = json.load(sys.stdin)
validators = {}
for name, schema in req["schemas"].items():
    jsonschema.Draft202012Validator.check_schema(schema)
    validators[name] = jsonschema.Draft202012Validator(schema)
out = []
for case in req["cases"]:
    errs = sorted(
        "/".join(str(p) for p in e.absolute_path) + ": " + e.message
        for e in validators[case["schema"]].iter_errors(case["instance"])
    )
    out.append({"name": case["name"], "valid": not errs, "errors": errs[:8]})
json.dump(out, sys.stdout)
