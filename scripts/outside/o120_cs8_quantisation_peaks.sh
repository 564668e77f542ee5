#!/bin/bash
# o120: a confident wrong number from the simulated radio as a HackRF user sees it. rxsim's CS8 stream (a HackRF's
# native format) was its clean CF32 signal rounded to 8 bits: with its noise (−60 dBFS) under one count, rounding a
# −20 dBFS tone is a deterministic function of the tone, and its harmonics came out as carriers. `capture
# --record-format cs8` listed 5 of them as peaks (99.5, 100.5, 99.7, 99.9, 100.3 MHz, up to 27 dB SNR) beside the
# real one and said PASS; the same capture in CF32 lists the tone alone. A real 8-bit converter sees a count or so of
# analog noise, which makes its quantisation error noise. Expected: CS8 lists the tone alone, like CF32.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o120.XXXXXX); cd "$L"; export XDG_CACHE_HOME=$L/cache HOME=$L/home; mkdir -p "$HOME"
for f in cs8 cf32; do
  "$RXN" --sim --json capture -d driver=rxsim,serial=o120$f,pace=0,tone_hz=100.1e6 -f 100M -r 1M -t 0.5 \
    --record "r.$f" --record-format $f > $f.json 2> $f.err; echo "capture --record-format $f: rc=$?"
  panics $f.err && { echo "broken: a panic"; exit 0; }
  python3 -c "import json,sys; d=json.load(open('$f.json')); print(' '.join('%.6f MHz %.1f dBFS SNR %.1f dB;' % (p['frequency_hz']/1e6, p['power_db'], p['snr_db']) for p in d['peaks']), 'status', d['status'])" > $f.peaks 2>&1
  echo "  peaks: $(cat $f.peaks)"
done
grep -q '100.100000 MHz' cf32.peaks || { echo "broken: the CF32 capture did not find the tone: $(cat cf32.err | head -c 200)"; exit 0; }
n=$(grep -o 'MHz' cs8.peaks | wc -l)
[ "$n" -ne 1 ] && { echo "broken: the CS8 capture lists $n peaks where CF32 lists the tone alone: $(cat cs8.peaks)"; exit 0; }
grep -q '100.100000 MHz' cs8.peaks || { echo "broken: the CS8 capture lost the tone: $(cat cs8.peaks)"; exit 0; }
echo held; exit 1
