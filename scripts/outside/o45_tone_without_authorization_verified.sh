#!/bin/bash
# o45: a result that records a transmission (`tx`: a tone keyed, samples sent) under a YELLOW task with no
# authorization is verified OK by the main PC. Every real transmission is a RED task's, authorized with
# `AUTHORIZE RF TX` (docs/safety.md); a result saying otherwise is either a node that transmitted against its
# interlock or a peer framing one — either way the main PC must say so, not list it as a clean PASS.
# Here a peer copies a real RED result under a new ID, sets risk_level YELLOW and authorization null, keeps
# every file agreeing, and pushes it as a plain commit adding its three files.
source "$(dirname "$0")/lib.sh"
newlab o45; policy; rxn node set-name LAB1 >/dev/null
TX='{"op":"tx_tone","device":"driver=rxsim,serial=tx","frequency_hz":433.92e6,"sample_rate_hz":2e6,"tone_offset_hz":5e4,"gain_db":0,"duration_s":0.3}'
{ hdr AUTH1 YES NO YES; plan "$TX"; } | post; approve
echo 'AUTHORIZE RF TX' | rxn --sim run AUTH1 >/dev/null 2>&1; echo "PUBLISH AUTH1" | rxn publish AUTH1 --push >/dev/null 2>&1
G clone -q -b rx-node "$L/origin.git" "$L/peer" 2>/dev/null
cd "$L/peer" && python3 - rx-results/AUTH1/LAB1 rx-results/AUTH2/LAB1 AUTH2 <<'PY'
import hashlib, json, os, re, sys
src, dst, new = sys.argv[1:4]
d = json.load(open(src + '/RX_RESULT.json')); old = d['task_id']
d['task_id'] = new; d['risk_level'] = 'YELLOW'; d['authorization'] = None
js = json.dumps(d, indent=2, sort_keys=True) + '\n'
md = open(src + '/RX_RESULT.md').read().replace(old, new).replace('| Risk level | RED |', '| Risk level | YELLOW |')
md = re.sub(r'\| Authorization \| [^\n]*\|', '| Authorization | — |', md)
md = re.sub(r'json_sha256=[0-9a-f]+', 'json_sha256=' + hashlib.sha256(js.encode()).hexdigest(), md)
m = json.load(open(src + '/LOG_META.json')); m['task_id'] = new
for e in m['files']:
    body = md if e['name'] == 'RX_RESULT.md' else js
    e['bytes'] = len(body.encode()); e['sha256'] = hashlib.sha256(body.encode()).hexdigest()
os.makedirs(dst)
open(dst + '/RX_RESULT.json', 'w').write(js); open(dst + '/RX_RESULT.md', 'w').write(md)
open(dst + '/LOG_META.json', 'w').write(json.dumps(m, indent=2, sort_keys=True) + '\n')
PY
G add -A && G commit -qm "rx-results: AUTH2 (PASS) from LAB1

Task: AUTH2
Node-Name: LAB1" && G push -q origin HEAD:rx-node
cd "$L/main"; "$RXN" results verify AUTH2 > $L/verify.out 2>&1; rc=$?; cut -c1-220 $L/verify.out
grep -E 'Risk level|Authorization|samples sent' "$L/peer/rx-results/AUTH2/LAB1/RX_RESULT.md" | cut -c1-120
[ $rc -eq 0 ] && { echo "broken: a transmission under a YELLOW task without authorization is verified OK"; exit 0; }
grep -q 'authorization' $L/verify.out || { echo "broken: verify failed without naming the missing authorization"; exit 0; }
echo held; exit 1
