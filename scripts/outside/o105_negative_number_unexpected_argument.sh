#!/bin/bash
# o105: a negative number given to a flag — `-g -5` (radios with attenuation have gains below 0 dB, and plans
# take -100 dB), `-t -1`, `-f -5`, `--min-snr-db -3` — was refused by the argument parser as "unexpected argument
# '-5' found" with the tip "to pass '-5' as a value, use '-- -5'", which does not work either; no word of the flag,
# its range or the radio's. Expected: each reaches the flag's own check, which names the flag and the value.
source "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o105.XXXXXX); cd "$L"; export HOME="$L"
cap() { "$RXN" --sim capture -d driver=rxsim "$@" 2>&1; }
cap -f 100M -r 2M -t 0.1 -g -5 > g.out; cap -f 100M -r 2M -t -1 -g 20 > t.out
cap -f 100M -r 2M -t 0.1 -g 20 --min-snr-db -3 > s.out
cap -f 100M -r 2M -t 0.1 -g 20 -- -5 > tip.out
for f in g t s tip; do echo "$f: $(grep -a -E 'error' $f.out | head -1)"; done
panics g.out t.out s.out && { echo "broken: a panic"; exit 0; }
grep -q "unexpected argument '-" g.out t.out s.out && { echo "broken: a negative number is an 'unexpected argument', the flag not named"; exit 0; }
grep -q 'gain_db -5' g.out && grep -q -- '--duration-s' t.out && grep -q -- '--min-snr-db -3' s.out \
  || { echo "broken: a flag's own check does not name the negative value"; exit 0; }
echo held; exit 1
