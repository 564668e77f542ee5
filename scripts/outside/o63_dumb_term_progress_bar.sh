#!/bin/bash
# o63: on a terminal whose TERM is `dumb` (an editor's shell buffer, a serial console logged to a file) `rxnode capture`
# drew its progress bar anyway: Unicode blocks, `\r` and `ESC [2K` on every redraw, which such a terminal prints as
# text (a 1.5 s capture left ~15 bars in the log). Colour already followed TERM=dumb; the bar did not.
source "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o63.XXXXXX); cd "$L"
command -v script >/dev/null || { echo "cannot play: no script(1)"; exit 2; }
TERM=dumb script -qc "'$RXN' --sim capture -d driver=rxsim,pace=1,serial=o63 -f 100M -r 2M -t 1.5" /dev/null > out.txt 2>&1
esc=$(grep -ac $'\x1b\\[2K' out.txt); bars=$(grep -ao ' capture \[' out.txt | wc -l)
echo "ESC[2K lines: $esc, bars drawn: $bars; $(grep -a 'status:' out.txt | tr -d '\r')"
panics out.txt && { echo "broken: a panic"; exit 0; }
grep -aq 'status: PASS' out.txt || { echo "cannot play: the capture did not finish"; exit 2; }
[ "$bars" -gt 0 ] && { echo "broken: TERM=dumb got $bars progress-bar redraws with ANSI erase codes"; exit 0; }
echo held; exit 1
