#!/bin/bash
# o373: the node's policy says a kept calibration is good for rx.calibration_max_age_s (here 2 s; default 24 h,
# crystals drift with temperature and age), and `capture --apply-cal` refuses an older one. The TX range check used
# it at any age: the radio was measured at 0 ppm, the measurement went past its age, the radio now runs +20 ppm
# (rxsim ppm=20), and a RED tone at 434.78 MHz + 5 kHz (lands at 434.7937 MHz, outside 433.05–434.79 MHz) was
# judged with the old 0 ppm and keyed (rxsim's log: TX lines). Expected: refused before the prompt (exit 3),
# naming the measurement's age and the policy's limit. Exit 0 = defect present.
source "$(dirname "$0")/lib.sh"
newlab o373
policy '{"rx":{"max_duration_s":10,"max_gain_db":50,"calibration_max_age_s":2},"tx":{"allowed_ranges_hz":[[433.05e6,434.79e6]],"max_gain_db":10,"max_duration_s":2}}'
U=o373-$$
"$RXN" --repo $L/rx --sim clkin calibrate -d "driver=rxsim,serial=$U,pace=0,ppm=0,gsm_freq=935.2e6,gsm_snr_db=10" --method gsm -f 935.2M -g 20 -t 3 > $L/cal.out 2>&1 ||
  { echo "cannot play: calibrate failed: $(tail -2 $L/cal.out)"; exit 2; }
grep -m1 -oE 'PASS[^;]*ppm' $L/cal.out | head -1
grep -q 'kept in .local/calibration.json' $L/cal.out || { echo "cannot play: the calibration was not kept"; exit 2; }
sleep 3
: > $RXSIM_EVENT_LOG
{ hdr CAL1 YES NO YES; plan '{"op":"tx_tone","device":"driver=rxsim,serial='$U',ppm=20","frequency_hz":434.78e6,"sample_rate_hz":1e6,"tone_offset_hz":5e3,"gain_db":0,"duration_s":0.2}'; } | post; approve
echo 'AUTHORIZE RF TX' | "$RXN" --repo $L/rx --sim run CAL1 > $L/run.out 2>&1; rc=$?
echo "run rc=$rc: $(grep -m1 -oE 'kept calibration[^;]*|PASS  step 1[^—]*' $L/run.out | head -1)"
panics $L/run.out && { echo "broken: panic"; exit 0; }
[ "$(txlines)" -gt 0 ] && { echo "broken: the tone was keyed, judged by a calibration past rx.calibration_max_age_s ($(txlines) TX lines)"; exit 0; }
[ $rc = 3 ] && grep -q ' old, past' $L/run.out || { echo "cannot play: the run neither keyed nor named the stale calibration (rc=$rc): $(tail -3 $L/run.out)"; exit 2; }
echo held; exit 1
