#!/bin/bash
# o333: a new user types the radio's driver name alone, `-d hackrf`, as many SDR tools take it. SoapySDR reads a bare
# word as a key with no value that most modules ignore, so rxnode opened whichever radio was found first: under
# --sim, `capture -d hackrf` captured from rxsim and printed `capture on hackrf … status: PASS` (exit 0), and a task
# whose plan says `"device": "hackrf"` validated. Expected: refused before any radio opens (exit 2), naming the word
# and the fix `driver=hackrf`, on the command line and in a plan.
. "$(dirname "$0")/lib.sh"
newlab o333; policy; cd "$L/rx"
"$RXN" --sim capture -d hackrf -f 100e6 -r 1e6 -g 20 -t 0.1 > $L/cap.out 2>&1; rc=$?
{ hdr T1 YES YES NO; plan '{"op":"rx_capture","device":"hackrf","frequency_hz":100e6,"sample_rate_hz":2e6,"gain_db":20,"duration_s":0.2}'; } > $L/task.md
"$RXN" validate $L/task.md > $L/val.out 2>&1; rv=$?
echo "capture -d hackrf: rc=$rc: $(grep -a -m1 -E '^capture on|error' $L/cap.out | head -c 250) $(grep -a '^status' $L/cap.out)"
echo "validate, \"device\": \"hackrf\": rc=$rv: $(grep -a -m1 -E 'device|valid' $L/val.out | head -c 250)"
echo "rxsim log: $(wc -l < "$RXSIM_EVENT_LOG") line(s)"
panics $L/cap.out $L/val.out && { echo "broken: a panic"; exit 0; }
bad=""
[ "$rc" = 2 ] || bad="$bad capture -d hackrf exited $rc, not 2;"
grep -aq '^capture on hackrf' $L/cap.out && bad="$bad capture -d hackrf opened a radio;"
grep -aq 'driver=hackrf' $L/cap.out || bad="$bad capture does not name the fix driver=hackrf;"
[ "$rv" = 2 ] || bad="$bad validate of a plan with \"device\": \"hackrf\" exited $rv, not 2;"
grep -aq 'driver=hackrf' $L/val.out || bad="$bad validate does not name the fix driver=hackrf;"
[ -n "$bad" ] && { echo "broken:$bad"; exit 0; }; echo held; exit 1
