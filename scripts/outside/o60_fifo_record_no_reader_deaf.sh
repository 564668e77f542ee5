#!/bin/bash
# o60: `rxnode capture --record FIFO` (docs: "an existing FIFO streams to the program reading it") with no program
# reading the FIFO yet: the capture opened the radio, then waited in open(2) for a reader — for ever, the radio held,
# and deaf to Ctrl-C (it printed "stopping the capture" and went on waiting; only SIGKILL ended it). Expected: the
# reader is waited for before the radio opens, and a SIGINT ends the wait at once, saying which FIFO had no reader.
source "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o60.XXXXXX); cd "$L"; mkfifo iq; export RXSIM_EVENT_LOG="$L/events.log"; : > "$RXSIM_EVENT_LOG"
"$RXN" --sim capture -d driver=rxsim,serial=o60 -f 100e6 -r 2e6 -t 0.2 --record "$L/iq" > out.txt 2>&1 & P=$!
sleep 3; made=$(grep -c ' make ' "$RXSIM_EVENT_LOG"); kill -INT $P; sleep 3
if kill -0 $P 2>/dev/null; then alive=yes; kill -KILL $P; else alive=no; fi; wait $P 2>/dev/null
echo "radio made before any reader: $made; still running 3 s after SIGINT: $alive"; head -c 400 out.txt
panics out.txt && { echo "broken: a panic"; exit 0; }
[ "$alive" = yes ] && { echo "broken: a FIFO with no reader held the capture in open(2) after SIGINT (radio made: $made)"; exit 0; }
[ "$made" -gt 0 ] && { echo "broken: the radio was opened while no program read the FIFO"; exit 0; }
echo held; exit 1
