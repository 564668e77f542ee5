#!/bin/bash
# o394: honest exit: `analyze` of a noiseless synthetic tone (numpy's np.exp(2j*pi*f*t).astype(np.complex64), the first
# file a user tries) reported the tone, where and as loud as it is (+100.000 kHz, -6.0 dBFS), the floor n/a with its
# reason, and then exited 1, as for a dead receiver or all-zero samples. Such a file measured everything it holds:
# now exit 0. A noiseless constant (a converter stuck at one code: no peak) and all-zero samples still exit 1.
# Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o394.XXXXXX); cd "$L" || exit 2
python3 -c "
import numpy as np
fs = 2e6; n = 1 << 16; t = np.arange(n) / fs
(0.5 * np.exp(2j * np.pi * 1e5 * t)).astype(np.complex64).tofile('tone.cf32')
np.full(n, 0.3 - 0.2j, np.complex64).tofile('const.cf32')
np.zeros(n, np.complex64).tofile('zero.cf32')" || { echo "cannot play: numpy missing"; exit 2; }
"$RXN" analyze tone.cf32 -r 2M > tone.txt 2>&1; t=$?
"$RXN" analyze tone.cf32 -r 2M --json > tone.json 2>/dev/null; tj=$?
"$RXN" analyze const.cf32 -r 2M > const.txt 2>&1; c=$?
"$RXN" analyze zero.cf32 -r 2M > zero.txt 2>&1; z=$?
echo "noiseless tone:"; grep -E '^(noise floor|peaks)' tone.txt; echo "  exit $t (text), $tj (--json)"
echo "constant:  $(grep -E 'noise floor' const.txt | tr -s ' ')  exit $c"
echo "zeros:     $(grep -E 'noise floor' zero.txt | tr -s ' ')  exit $z"
panics ./*.txt && { echo "broken: a panic"; exit 0; }
grep -qE 'peaks +\+100\.000 kHz +-6\.0 dBFS' tone.txt || { echo "cannot play: the tone was not reported at +100 kHz, -6.0 dBFS"; exit 2; }
[ "$c" = 1 ] && [ "$z" = 1 ] || { echo "broken: a constant or all-zero samples no longer exit 1 ($c, $z)"; exit 0; }
[ "$t" != 0 ] || [ "$tj" != 0 ] && { echo "broken: the noiseless tone was reported and analyze exited $t (text), $tj (--json), as for a dead receiver"; exit 0; }
echo held; exit 1
