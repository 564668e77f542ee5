#!/bin/bash
# o45: a result that records a transmission (`tx`: a tone keyed, samples sent) under a YELLOW task with no
# authorization is verified OK by the main PC. Every real transmission is a RED task's, authorized with
# `AUTHORIZE RF TX` (docs/safety.md); a result saying otherwise is either a node that transmitted against its
# interlock or a peer framing one — either way the main PC must say so, not list it as a clean PASS.
# Here a peer copies a real RED result under a new ID, sets risk_level YELLOW and authorization null, keeps
# every file agreeing, and pushes it as a plain commit adding its three files.
source "$(dirname "$0")/lib.sh"
newlab o45; published_tone AUTH1
peer_copy AUTH1 AUTH2 "d['risk_level'] = 'YELLOW'; d['authorization'] = None" \
  "md = re.sub(r'\| Authorization \| [^\n]*\|', '| Authorization | — |', md.replace('| Risk level | RED |', '| Risk level | YELLOW |'))"
cd "$L/main"; "$RXN" results verify AUTH2 > $L/verify.out 2>&1; rc=$?; cut -c1-220 $L/verify.out
grep -E 'Risk level|Authorization|samples sent' "$L/peer/rx-results/AUTH2/LAB1/RX_RESULT.md" | cut -c1-120
[ $rc -eq 0 ] && { echo "broken: a transmission under a YELLOW task without authorization is verified OK"; exit 0; }
grep -q 'authorization' $L/verify.out || { echo "broken: verify failed without naming the missing authorization"; exit 0; }
echo held; exit 1
