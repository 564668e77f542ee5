#!/bin/bash
# o13: wrong "nothing there": a -20 dBFS carrier exactly at the tuned frequency (rxsim tone_hz = the capture's centre) is
# reported as `peaks none` (status PASS), while the same report says mean power -20.0 dBFS, 70 dB above the floor: the
# peak search silently drops the DC bin and its two neighbours (hw/dsp/src/dsp/welch.rs dc_exclude_bins 2), which no
# user doc mentions. Tuning straight onto the signal of interest (`-f 433.92M` for a 433.92 MHz device) is the everyday
# case; at 250 MS/s the blind span is ±183 kHz. Moved 200 kHz off centre the same tone is listed. Expected: the carrier
# listed (or the DC exclusion said in the report with the span it hides). Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o13.XXXXXX); cd "$L"
"$RXN" --sim capture -d driver=rxsim,tone_hz=100000000 -f 100M -r 2M -t 0.1 -g 20 > on.txt 2>&1
"$RXN" --sim capture -d driver=rxsim,tone_hz=100200000 -f 100M -r 2M -t 0.1 -g 20 > off.txt 2>&1
echo "tone at the centre:  $(grep -E 'peaks|noise floor|status' on.txt | sed 's/  */ /g' | tr '\n' '|')"
echo "tone 200 kHz off:    $(grep -E 'peaks|status' off.txt | sed 's/  */ /g' | tr '\n' '|')"
grep -q 'peaks *none' on.txt && grep -q 'mean power -20' on.txt && { echo "broken: a -20 dBFS carrier at the centre is reported as 'peaks none'"; exit 0; }; echo held; exit 1
