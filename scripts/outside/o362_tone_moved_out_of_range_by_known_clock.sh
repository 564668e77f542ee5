#!/bin/bash
# o362: the node has measured its radio's clock (`clkin calibrate`, kept in .local/calibration.json): +20 ppm fast.
# A RED task asks for a tone at 434.78 MHz + 5 kHz, 5 kHz under the top of the allowed range 433.05–434.79 MHz.
# The radio's LO and sample clock both run 20 ppm fast, so the tone goes on air at 434.7937 MHz, outside the range;
# the range check judged only the asked frequency, and the tone was keyed. The radio's own log (rxsim) is the witness.
source "$(dirname "$0")/lib.sh"
newlab o362
policy; U=o362-$$
"$RXN" --repo $L/rx --sim clkin calibrate -d "driver=rxsim,serial=$U,pace=0,ppm=20,gsm_freq=935.2e6,gsm_snr_db=10" --method gsm -f 935.2M -g 20 -t 3 > $L/cal.out 2>&1 ||
  { echo "cannot play: calibrate failed: $(tail -2 $L/cal.out)"; exit 2; }
grep -m1 -oE 'PASS[^;]*ppm' $L/cal.out | head -1
: > $RXSIM_EVENT_LOG
{ hdr CAL1 YES NO YES; plan '{"op":"tx_tone","device":"driver=rxsim,serial='$U'","frequency_hz":434.78e6,"sample_rate_hz":1e6,"tone_offset_hz":5e3,"gain_db":0,"duration_s":0.2}'; } | post; approve
echo 'AUTHORIZE RF TX' | "$RXN" --repo $L/rx --sim run CAL1 > $L/run.out 2>&1; rc=$?
echo "run rc=$rc: $(grep -m1 -oE 'measured clock error[^,]*|PASS  step 1[^—]*' $L/run.out | head -1)"
[ "$(txlines)" -gt 0 ] && { echo "broken: the tone was keyed although the radio's kept +20 ppm puts it at 434.7937 MHz, outside 433.05–434.79 MHz ($(txlines) TX lines)"; exit 0; }
grep -q 'measured clock error' $L/run.out || { echo "cannot play: the run neither keyed nor named the clock error: $(tail -3 $L/run.out)"; exit 2; }
echo held; exit 1
