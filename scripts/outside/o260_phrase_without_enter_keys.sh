#!/bin/bash
# o260: `AUTHORIZE RF TX` that is never ended with Enter — piped without a newline, or typed and followed
# by Ctrl-D — is input that ended mid-line. The prompt says "Type exactly `AUTHORIZE RF TX` and press
# Enter"; a line that was not ended is not an answer (docs/safety.md). The radio's own log (rxsim) is
# the witness: any TX line after such input is a transmission the operator did not confirm.
source "$(dirname "$0")/lib.sh"
newlab o260; policy
{ hdr NOENTER YES NO YES; plan '{"op":"tx_tone","device":"driver=rxsim,serial=o260-'$$'","frequency_hz":433.92e6,"sample_rate_hz":2e6,"tone_offset_hz":5e4,"gain_db":0,"duration_s":0.2}'; } | post; approve
printf 'AUTHORIZE RF TX' | rxn --sim run NOENTER > $L/run.out 2>&1; rc=$?
echo "run rc=$rc; $(grep -m1 -o 'no line typed[^;]*\|refused[^;]*' $L/run.out | head -1)"
n=$(txlines); echo "TX lines in the radio's log: $n"
[ "$n" -gt 0 ] && { echo "broken: the phrase without Enter keyed the transmitter ($n TX lines, run rc=$rc)"; exit 0; }
echo held; exit 1
