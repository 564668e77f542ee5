#!/bin/bash
# o374: a radio whose clock error was never measured may be off by its crystal's whole tolerance (±20 ppm for a
# free-running crystal: HackRF One, LimeSDR). A RED tone asked at 434.78 MHz + 5 kHz, 5 kHz inside a range ending at
# 434.79 MHz, lands at 434.7937 MHz on a radio running +20 ppm (rxsim ppm=20) that nobody measured: it was judged at
# its nominal frequency and keyed (rxsim's log: TX lines). Expected: refused before the prompt (exit 3), naming the
# unmeasured clock and tx.unmeasured_clock_ppm. Exit 0 = defect present.
source "$(dirname "$0")/lib.sh"
newlab o374
policy '{"rx":{"max_duration_s":10,"max_gain_db":50},"tx":{"allowed_ranges_hz":[[433.05e6,434.79e6]],"max_gain_db":10,"max_duration_s":2}}'
U=o374-$$
: > $RXSIM_EVENT_LOG
{ hdr UNM1 YES NO YES; plan '{"op":"tx_tone","device":"driver=rxsim,serial='$U',ppm=20","frequency_hz":434.78e6,"sample_rate_hz":1e6,"tone_offset_hz":5e3,"gain_db":0,"duration_s":0.2}'; } | post; approve
echo 'AUTHORIZE RF TX' | "$RXN" --repo $L/rx --sim run UNM1 > $L/run.out 2>&1; rc=$?
echo "run rc=$rc: $(grep -m1 -oE 'never measured[^;]*|PASS  step 1[^—]*' $L/run.out | head -1)"
panics $L/run.out && { echo "broken: panic"; exit 0; }
[ "$(txlines)" -gt 0 ] && { echo "broken: the tone was keyed on a radio never measured, 5 kHz from the range's edge, which its crystal's ±20 ppm (8.7 kHz) can cross ($(txlines) TX lines)"; exit 0; }
[ $rc = 3 ] && grep -q 'never measured' $L/run.out && grep -q 'tx.unmeasured_clock_ppm' $L/run.out ||
  { echo "cannot play: the run neither keyed nor named the unmeasured clock (rc=$rc): $(tail -3 $L/run.out)"; exit 2; }
echo held; exit 1
