#!/bin/bash
# o41: `.local/STOP` (docs/operator.md "Holding the node": use it while you re-cable, flash firmware or lend the
# radios out) is read once, at the start of `run`. An authorized RED plan — a 2 s capture, then a tone — whose
# operator puts the hold in place during the capture still keys the transmitter afterwards: the radio's own log
# shows the TX stream, 1 s after the hold. A hold must stop every radio step that has not started.
source "$(dirname "$0")/lib.sh"
newlab o41; policy
RX='{"op":"rx_capture","device":"driver=rxsim","frequency_hz":100e6,"sample_rate_hz":250e3,"gain_db":20,"duration_s":2}'
TX='{"op":"tx_tone","device":"driver=rxsim,serial=tx","frequency_hz":433.92e6,"sample_rate_hz":2e6,"tone_offset_hz":5e4,"gain_db":0,"duration_s":0.3}'
{ hdr HOLD1 YES YES YES; plan "$RX,$TX"; } | post; approve
echo 'AUTHORIZE RF TX' | rxn --sim run HOLD1 > $L/run.out 2>&1 & RP=$!
for i in $(seq 300); do grep -q 'activateStream RX' $RXSIM_EVENT_LOG && break; sleep 0.05; done
touch $L/rx/.local/STOP; echo "hold in place during the capture ($(grep -c 'activateStream RX' $RXSIM_EVENT_LOG) RX stream active)"
wait $RP; rc=$?
grep -E 'step [0-9]+: ' $L/run.out | head -5
n=$(txlines)
echo "run rc=$rc; TX lines in the radio log after the hold: $n"
[ "$n" -gt 0 ] && { echo "broken: the transmitter was keyed while .local/STOP held the node"; exit 0; }
grep -q 'STOP' $L/run.out || { echo "broken: the tone did not run but the output does not name the hold"; exit 0; }
echo held; exit 1
