#!/bin/bash
# o220: an orchestrating program on the main PC writes a task by hand and checks it with `rxnode validate --json`
# before pushing; later it matches the results that come back (`task_sha256` in RX_RESULT.json and LOG_META.json) to
# the task it posted. The text output printed `sha256: <hex>` and the risk's reasons, but `--json` carried neither:
# the hash and the reasons were prose only. Expected: `--json` has `task_sha256` (the SHA-256 of the file's bytes,
# the same as the text's) and `risk_reasons`; an invalid file has `task_sha256: null`. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab valhash
{ hdr HAND_1 YES YES NO | sed 's/$/\r/'; plan '{"op":"rx_capture","device":"driver=rxsim","frequency_hz":100e6,"sample_rate_hz":2e6,"gain_db":20,"duration_s":0.2}'; } > "$L/task.md"
want=$(sha256sum < "$L/task.md" | cut -d' ' -f1)
"$RXN" validate "$L/task.md" > "$L/v.txt" 2>&1; echo "validate: rc=$? $(grep sha256 "$L/v.txt")"
"$RXN" validate "$L/task.md" --json > "$L/v.json" 2> "$L/v.err"; echo "validate --json: rc=$?"; sed 's/^/  /' "$L/v.json" | head -12
sed -i '/^RF_TX/d' "$L/task.md"; "$RXN" validate "$L/task.md" --json > "$L/bad.json" 2>/dev/null; echo "invalid: rc=$?"
got=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d.get('task_sha256','<absent>'), len(d.get('risk_reasons') or []))" "$L/v.json")
bad_hash=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d.get('task_sha256','<absent>'))" "$L/bad.json")
echo "sha256sum: $want; --json task_sha256 and reasons: $got; invalid: $bad_hash"
bad=""
[ "${got%% *}" = "$want" ] || bad="$bad no-task_sha256"
[ "${got##* }" = 2 ] || bad="$bad no-risk_reasons"
grep -q "sha256: $want" "$L/v.txt" || bad="$bad text-hash-differs"
[ "$bad_hash" = None ] || bad="$bad invalid-hash:$bad_hash"
panics "$L/v.txt" "$L/v.json" "$L/v.err" && bad="$bad panic"
[ -n "$bad" ] && { echo "broken: validate --json leaves out what its text prints (the task's SHA-256, the risk's reasons):$bad"; exit 0; }; echo held; exit 1
