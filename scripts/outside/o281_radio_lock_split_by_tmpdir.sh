#!/bin/bash
# o281: two shells of one user that disagree on TMPDIR, neither with XDG_RUNTIME_DIR (su, cron, an SSH
# login without a session manager). One receives on a radio (`capture`, 5 s); meanwhile the other runs
# an authorized RED tone on the same radio. docs/operator.md (one process per radio): a radio another
# rxnode holds is waited for, then refused; a run never keys a radio another rxnode is receiving on.
# The lock folder followed TMPDIR, so each shell locked the radio in its own folder and the tone was
# keyed in the middle of the reception. The radio's own log (rxsim) is the witness.
source "$(dirname "$0")/lib.sh"
newlab o281; policy; unset XDG_RUNTIME_DIR; mkdir -p $L/tmp1 $L/tmp2
DEV="driver=rxsim,serial=o281-$$"
{ hdr SPLIT YES NO YES; plan '{"op":"tx_tone","device":"'$DEV'","frequency_hz":433.92e6,"sample_rate_hz":2e6,"tone_offset_hz":5e4,"gain_db":0,"duration_s":0.3}'; } | post; approve
( TMPDIR=$L/tmp1 "$RXN" --repo $L/rx --sim capture --device "$DEV" --frequency-hz 100e6 --sample-rate-hz 2e6 --gain-db 20 --duration-s 5 > $L/cap.out 2>&1 ) &
for i in $(seq 500); do grep -q ' activateStream RX' $RXSIM_EVENT_LOG && break; sleep 0.01; done
echo 'AUTHORIZE RF TX' | TMPDIR=$L/tmp2 "$RXN" --repo $L/rx --sim run SPLIT > $L/run.out 2>&1; echo "run rc=$?: $(grep -m1 -E '^  (PASS|BLOCKED|FAIL)' $L/run.out | cut -c1-110)"
wait
grep -E 'activateStream|deactivateStream|exitWhileActive' $RXSIM_EVENT_LOG | cut -c1-80
inside=$(awk '/ activateStream RX/{a=$1} / (deactivateStream|exitWhileActive) RX/{d=$1} / activateStream TX/{t=$1} END{print (t!="" && t>a && (d=="" || t<d)) ? 1 : 0}' $RXSIM_EVENT_LOG)
[ "$inside" = 1 ] && { echo "broken: the tone was keyed on $DEV while another rxnode was receiving on it (TMPDIR differed, no XDG_RUNTIME_DIR)"; exit 0; }
echo held; exit 1
