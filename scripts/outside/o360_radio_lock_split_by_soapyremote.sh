#!/bin/bash
# o360: one radio reached two ways on one machine: a `capture` on it directly (`driver=rxsim,serial=X`) and an
# authorized RED tone through a SoapySDRServer on this machine (`driver=remote,remote=tcp://127.0.0.1:P,
# remote:driver=rxsim,serial=X`, the server listed in tx.allowed_remote_servers). docs/operator.md (one process
# per radio): a radio another rxnode holds is waited for, then refused; a run never keys a radio another rxnode
# is receiving on. The lock was named after the server as well as the unit, so the two spellings locked one
# radio under two names and the tone was keyed in the middle of the reception. The radio's own log (rxsim,
# written by the capture's process and by the server's) is the witness. Needs SoapySDRServer and avahi-daemon
# (scripts/remote-services.sh starts it; root).
source "$(dirname "$0")/lib.sh"
newlab o360
soapy_server || exit 2
U=o360-$$; LOCAL="driver=rxsim,serial=$U"; REMOTE="driver=remote,remote=$SERVER,remote:driver=rxsim,serial=$U"
policy '{"rx":{"max_duration_s":10,"max_gain_db":50},"tx":{"allowed_ranges_hz":[[433.05e6,434.79e6]],"max_gain_db":10,"max_duration_s":2,"allowed_remote_servers":["'$SERVER'"]}}'
{ hdr VIA YES NO YES; plan '{"op":"tx_tone","device":"'$REMOTE'","frequency_hz":433.92e6,"sample_rate_hz":1e6,"tone_offset_hz":5e4,"gain_db":0,"duration_s":0.3}'; } | post; approve
( "$RXN" --repo $L/rx --sim capture --device "$LOCAL" --frequency-hz 100e6 --sample-rate-hz 2e6 --gain-db 20 --duration-s 5 > $L/cap.out 2>&1 ) &
CP=$!
for i in $(seq 500); do grep -q ' activateStream RX' $RXSIM_EVENT_LOG && break; sleep 0.01; done
echo 'AUTHORIZE RF TX' | "$RXN" --repo $L/rx run VIA > $L/run.out 2>&1; echo "run rc=$?: $(grep -m1 -E '^  (PASS|BLOCKED|FAIL)' $L/run.out | cut -c1-160)"
wait $CP
grep -E 'make|activateStream|deactivateStream|exitWhileActive' $RXSIM_EVENT_LOG | cut -c1-80
grep -q ' activateStream RX' $RXSIM_EVENT_LOG || { echo "cannot play: the capture never received: $(tail -2 $L/cap.out)"; exit 2; }
inside=$(awk '/ activateStream RX/{a=$1} / (deactivateStream|exitWhileActive) RX/{d=$1} / activateStream TX/{t=$1} END{print (t!="" && t>a && (d=="" || t<d)) ? 1 : 0}' $RXSIM_EVENT_LOG)
[ "$inside" = 1 ] && { echo "broken: the tone was keyed on $U through the SoapySDRServer on this machine while another rxnode was receiving on it directly"; exit 0; }
grep -q 'in use by another' $L/run.out || { echo "cannot play: the run neither keyed nor waited for the radio: $(tail -3 $L/run.out)"; exit 2; }
echo held; exit 1
