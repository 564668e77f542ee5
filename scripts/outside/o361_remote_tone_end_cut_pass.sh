#!/bin/bash
# o361: an authorized RED tone of 0.3 s at 1 MS/s on a radio served by SoapySDRServer on this machine
# (`driver=remote,…,remote:driver=rxsim`, the server listed in tx.allowed_remote_servers). After its last write
# `run` deactivated the TX stream at once, while the link still held the tone's end: the far radio's own log
# (rxsim, written by the server's process) shows its TX stream active for 0.250 s, yet the result said PASS,
# "300000 of 300000 samples sent". A tone is whole only if the radio was keyed as long as its samples take
# (docs/safety.md#time-on-air). Needs SoapySDRServer and avahi-daemon (scripts/remote-services.sh; root).
source "$(dirname "$0")/lib.sh"
newlab o361
soapy_server || exit 2
U=o361-$$; REMOTE="driver=remote,remote=$SERVER,remote:driver=rxsim,serial=$U"
policy '{"rx":{"max_duration_s":10,"max_gain_db":50},"tx":{"allowed_ranges_hz":[[433.05e6,434.79e6]],"max_gain_db":10,"max_duration_s":2,"allowed_remote_servers":["'$SERVER'"]}}'
{ hdr VIA YES NO YES; plan '{"op":"tx_tone","device":"'$REMOTE'","frequency_hz":433.92e6,"sample_rate_hz":1e6,"tone_offset_hz":5e4,"gain_db":0,"duration_s":0.3}'; } | post; approve
echo 'AUTHORIZE RF TX' | "$RXN" --repo $L/rx run VIA > $L/run.out 2>&1; rc=$?
status=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print([c["status"] for c in r["checks"] if c["name"].endswith("tx_tone")][0])' $L/rx/.local/rx_agent_outbox/VIA/RX_RESULT.json 2>/dev/null)
grep -E 'activateStream TX|deactivateStream TX' $RXSIM_EVENT_LOG | cut -c1-80
keyed=$(awk '/ activateStream TX/{a=$1} / deactivateStream TX/{d=$1} END{if (a!="" && d!="") printf "%.3f", d-a}' $RXSIM_EVENT_LOG)
echo "run rc=$rc, tx_tone $status; the far radio's TX stream active ${keyed:-?} s for a 0.300 s tone"
[ -n "$keyed" ] && [ -n "$status" ] || { echo "cannot play: no tone on the far radio or no result: $(tail -3 $L/run.out)"; exit 2; }
short=$(python3 -c "print(1 if $keyed < 0.295 else 0)")
[ "$status" = PASS ] && [ "$short" = 1 ] && { echo "broken: the tone is PASS though the far radio was keyed only $keyed s of its 0.300 s"; exit 0; }
echo held; exit 1
