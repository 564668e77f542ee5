#!/bin/bash
# o42: a result that says the transmitter stayed keyed 4 s past its permit (on air 4.3 s for a 0.3 s tone) is PASS,
# and the main PC's `results verify` says OK. A peer (or a node that lies) copies a real RED result under a new task
# ID, edits `tx.past_permit_s` / `tx.on_air_s`, keeps the check PASS, makes the Markdown, its JSON hash and
# LOG_META agree and pushes it as a plain commit adding its three files. `run` itself never calls such a tone PASS
# (docs/safety.md#time-on-air); the validator must not either.
source "$(dirname "$0")/lib.sh"
newlab o42; published_tone TONE1
peer_copy TONE1 TONE2 "d['tx']['past_permit_s'] = 4.0; d['tx']['on_air_s'] = 4.3" \
  "md = re.sub(r'\| on air \| [0-9.]+ s \|', '| on air | 4.300 s |', md).replace('| past permit | 0.000 s |', '| past permit | 4.000 s |')"
cd "$L/main"; "$RXN" results verify TONE2 > $L/verify.out 2>&1; rc=$?; cut -c1-220 $L/verify.out
grep -E 'past permit|on air' "$L/peer/rx-results/TONE2/LAB1/RX_RESULT.md"
[ $rc -eq 0 ] && { echo "broken: a PASS tone keyed 4 s past its permit is verified OK by the main PC"; exit 0; }
grep -q 'past_permit_s' $L/verify.out || { echo "broken: verify failed without naming the tone's time past its permit"; exit 0; }
echo held; exit 1
