#!/bin/bash
# o42: a result that says the transmitter stayed keyed 4 s past its permit (on air 4.3 s for a 0.3 s tone) is PASS,
# and the main PC's `results verify` says OK. A peer (or a node that lies) copies a real RED result under a new task
# ID, edits `tx.past_permit_s` / `tx.on_air_s`, keeps the check PASS, makes the Markdown, its JSON hash and
# LOG_META agree and pushes it as a plain commit adding its three files. `run` itself never calls such a tone PASS
# (docs/safety.md#time-on-air); the validator must not either.
source "$(dirname "$0")/lib.sh"
newlab o42; policy; rxn node set-name LAB1 >/dev/null
TX='{"op":"tx_tone","device":"driver=rxsim,serial=tx","frequency_hz":433.92e6,"sample_rate_hz":2e6,"tone_offset_hz":5e4,"gain_db":0,"duration_s":0.3}'
{ hdr TONE1 YES NO YES; plan "$TX"; } | post; approve
echo 'AUTHORIZE RF TX' | rxn --sim run TONE1 >/dev/null 2>&1; echo "PUBLISH TONE1" | rxn publish TONE1 --push >/dev/null 2>&1
G clone -q -b rx-node "$L/origin.git" "$L/peer" 2>/dev/null
cd "$L/peer" && python3 - rx-results/TONE1/LAB1 rx-results/TONE2/LAB1 TONE2 <<'PY'
import hashlib, json, os, re, sys
src, dst, new = sys.argv[1:4]
d = json.load(open(src + '/RX_RESULT.json')); old = d['task_id']
d['task_id'] = new; d['tx']['past_permit_s'] = 4.0; d['tx']['on_air_s'] = 4.3
js = json.dumps(d, indent=2, sort_keys=True) + '\n'
md = open(src + '/RX_RESULT.md').read().replace(old, new)
md = re.sub(r'\| on air \| [0-9.]+ s \|', '| on air | 4.300 s |', md).replace('| past permit | 0.000 s |', '| past permit | 4.000 s |')
md = re.sub(r'json_sha256=[0-9a-f]+', 'json_sha256=' + hashlib.sha256(js.encode()).hexdigest(), md)
m = json.load(open(src + '/LOG_META.json')); m['task_id'] = new
for e in m['files']:
    body = md if e['name'] == 'RX_RESULT.md' else js
    e['bytes'] = len(body.encode()); e['sha256'] = hashlib.sha256(body.encode()).hexdigest()
os.makedirs(dst)
open(dst + '/RX_RESULT.json', 'w').write(js); open(dst + '/RX_RESULT.md', 'w').write(md)
open(dst + '/LOG_META.json', 'w').write(json.dumps(m, indent=2, sort_keys=True) + '\n')
PY
G add -A && G commit -qm "rx-results: TONE2 (PASS) from LAB1

Task: TONE2
Node-Name: LAB1" && G push -q origin HEAD:rx-node
cd "$L/main"; "$RXN" results verify TONE2 > $L/verify.out 2>&1; rc=$?; cut -c1-220 $L/verify.out
grep -E 'past permit|on air' "$L/peer/rx-results/TONE2/LAB1/RX_RESULT.md"
[ $rc -eq 0 ] && { echo "broken: a PASS tone keyed 4 s past its permit is verified OK by the main PC"; exit 0; }
grep -q 'past_permit_s' $L/verify.out || { echo "broken: verify failed without naming the tone's time past its permit"; exit 0; }
echo held; exit 1
