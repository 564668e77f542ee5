#!/bin/bash
# o395: honest levels: a -20 dBFS tone at 0.47 of the rate (rxsim, 2 MS/s; the radio's bandwidth 1.5 MHz read back),
# in the receive filter's roll-off, was listed as `100.940000 MHz -33.7 dBFS SNR 57.7 dB` beside a floor read over the
# passband 99.400-100.600 MHz, nothing said: a level 13.7 dB low, given as if the tone had passed the filter whole.
# A peak outside the passband is now named, with the passband (`outside_passband_hz` in the JSON); the same tone at
# +400 kHz is not. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o395.XXXXXX); cd "$L" || exit 2
cap() { "$RXN" --sim capture -d "driver=rxsim,tone_hz=$1,tone_dbfs=-20" -f 100M -r 2M -t 0.2 "${@:2}"; }
cap 100.94e6 > edge.txt 2>&1; e=$?
cap 100.94e6 --json > edge.json 2>/dev/null
cap 100.4e6 > mid.txt 2>&1; m=$?
echo "tone -20 dBFS at 100.940 MHz (0.47 of the rate), exit $e:"; grep -E 'peaks|noise floor' edge.txt
echo "tone -20 dBFS at 100.400 MHz (0.20 of the rate), exit $m:"; grep -E 'peaks' mid.txt
panics ./*.txt && { echo "broken: a panic"; exit 0; }
grep -qE 'peaks +100\.940000 MHz' edge.txt || { echo "cannot play: rxsim's tone at 100.94 MHz was not listed"; exit 2; }
grep -q "outside the receiver's passband" mid.txt && { echo "broken: the tone inside the passband is named outside it"; exit 0; }
named=$(python3 -c "
import json
d = json.load(open('edge.json')); c = d['captures'][0] if 'captures' in d else d
print(sum(1 for p in c.get('peaks') or [] if abs(p['frequency_hz'] - 100.94e6) < 2e3 and p.get('outside_passband_hz')))")
grep -q "outside the receiver's passband" edge.txt && [ "$named" = 1 ] ||
  { echo "broken: the tone in the filter's roll-off is listed at $(grep -oE '100\.940000 MHz +-?[0-9.]+ dBFS' edge.txt | tr -s ' '), -20 dBFS sent, nothing said (JSON named: ${named:-0})"; exit 0; }
echo held; exit 1
