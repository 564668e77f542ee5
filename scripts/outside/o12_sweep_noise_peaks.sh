#!/bin/bash
# o12: honest numbers, sweeps (same root as o2): an FM-band sweep of rxsim's pure noise with a short dwell (1.1 ms per hop,
# bin 1 kHz: about one Welch average per hop) lists 16 band "peaks" 10-13 dB above the floor, status PASS; the same sweep
# with dwell 0.2 s says "no peaks above the noise". The peak threshold (6 dB) ignores the number of averages, and the
# max over ~20 000 single-average bins reaches 12 dB by chance. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o12.XXXXXX); cd "$L"
"$RXN" --sim sweep -d driver=rxsim --start-hz 88M --stop-hz 108M -B 1k -r 2M --dwell-s 0.0011 --settle-s 0 -g 20 --json > short.json 2>/dev/null
"$RXN" --sim sweep -d driver=rxsim --start-hz 88M --stop-hz 108M -B 1k -r 2M --dwell-s 0.2 -g 20 --json > long.json 2>/dev/null
s() { python3 -c "
import json; d=json.load(open('$1')); p=d.get('peaks') or []
print(d.get('status'), 'floor', round(d.get('noise_floor_db') or 0,1), 'peaks', len(p), 'max SNR', max([round(x.get('snr_db',0),1) for x in p] or [None]))"; }
echo "dwell 0.2 s:    $(s long.json)"; echo "dwell 1.1 ms:   $(s short.json)"
k=$(python3 -c "import json; print(len(json.load(open('short.json')).get('peaks') or []))")
[ "$k" -gt 0 ] && { echo "broken: $k band peaks with SNR listed in pure noise (short dwell), sweep PASS"; exit 0; }; echo held; exit 1
