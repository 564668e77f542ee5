#!/bin/bash
# o267: a careless operator answers a confirmation prompt wrongly: `authorize rf tx` (lower case) or Ctrl-D at
# `run R1`'s `AUTHORIZE RF TX`, `publish p1` at `publish P1 --push`'s `PUBLISH P1`. Each refusal said what
# differed and "nothing was written", `"fix": null` under --json: no word that the approval stands and the same
# command, typed again with the exact phrase, is the way on (`review` names its fix; these did not).
# Expected: each refusal at the prompt ends `— fix: `rxnode run R1` again, then type exactly `AUTHORIZE RF TX`
# and Enter` (publish: `rxnode publish P1 --push`, `PUBLISH P1`); a refusal before the prompt (policy) does not.
# Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab o267; policy; rxn node set-name LAB1 >/dev/null
{ hdr R1 YES NO YES; plan '{"op":"tx_tone","device":"driver=rxsim,serial=tx","frequency_hz":433.92e6,"sample_rate_hz":2e6,"tone_offset_hz":5e4,"gain_db":0,"duration_s":0.3}'; } | post; approve
echo 'authorize rf tx' | rxn --sim run R1 > $L/r1.out 2> $L/r1.err; echo "run, lower case: rc=$?"; tail -1 $L/r1.err | cut -c1-300
rxn --sim --json run R1 < /dev/null > $L/r2.out 2> $L/r2.err; echo "run --json, Ctrl-D: rc=$?"; tail -1 $L/r2.err | cut -c1-300
policy '{"rx":{"max_duration_s":10},"tx":{"allowed_ranges_hz":[[430e6,433e6]],"max_gain_db":10,"max_duration_s":2}}'
echo 'AUTHORIZE RF TX' | rxn --sim run R1 > $L/r4.out 2> $L/r4.err; echo "run out of policy: rc=$?"; tail -1 $L/r4.err | cut -c1-200
policy
echo 'AUTHORIZE RF TX' | rxn --sim run R1 > $L/r3.out 2> $L/r3.err; echo "run, the phrase: rc=$? (TX lines in the radio's log: $(txlines))"
echo 'publish r1' | rxn publish R1 --push > $L/p1.out 2> $L/p1.err; echo "publish --push, lower case: rc=$?"; tail -1 $L/p1.err | cut -c1-300
panics $L/*.err && { echo "broken: panic"; exit 0; }
bad=""
grep -q -- '— fix: `rxnode run R1` again, then type exactly `AUTHORIZE RF TX` and Enter$' $L/r1.err || bad="$bad run (wrong phrase) names no way on;"
python3 - $L/r2.err <<'PY' || bad="$bad run --json (end of input) has no fix;"
import json, sys
e = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])["error"]
sys.exit(0 if e.get("fix") == "`rxnode run R1` again, then type exactly `AUTHORIZE RF TX` and Enter" else 1)
PY
grep -q -- '— fix: `rxnode publish R1 --push` again, then type exactly `PUBLISH R1` and Enter$' $L/p1.err || bad="$bad publish names no way on;"
grep -q 'again, then type' $L/r4.err && bad="$bad a policy refusal tells to type again;"
[ -n "$bad" ] && { echo "broken: a refusal at a confirmation prompt leaves the operator without the next step:$bad"; exit 0; }
echo held; exit 1
