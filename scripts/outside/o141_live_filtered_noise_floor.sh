#!/bin/bash
# o141: a confident wrong number, live: rxsim replays noise through a 600 kHz receive filter at 2 MS/s (cs16, a tone
# 20 dB over the passband's noise per bin), as a radio whose bandwidth is set below the rate delivers it. `capture`
# read the floor in the stopband (-129 dBFS/bin for a passband at -62), the passband "an emission" with the tone at
# "SNR 89 dB", PASS, with or without the radio's bandwidth set (`-w 600k`, read back 600 kHz); a `sweep` (every hop
# the same filtered samples) read the dips between the hops' passbands as its floor and listed each passband as an
# emission of "SNR 79 dB", PASS. Expected: the passband's floor when the bandwidth is set, else no floor with the
# reason (capture FAIL, as for any missing floor); never a floor in the stopband. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o141.XXXXXX); cd "$L"
python3 - <<'PY'
import numpy as np
rng=np.random.default_rng(7); fs=2e6; n=1<<19; t=np.arange(n)/fs; f=np.fft.fftfreq(n,1/fs); bw=600e3
X=np.fft.fft((rng.normal(size=n)+1j*rng.normal(size=n))*0.02/np.sqrt(2)); a=np.abs(f); e=0.05*bw
h=np.clip((bw/2+e-a)/(2*e),0,1); h=0.5-0.5*np.cos(np.pi*h)
y=np.fft.ifft(X*h)+10**((10*np.log10(4e-4*1.5/2048)+20)/20)*np.exp(2j*np.pi*(bw/4+1234.5)*t)
iq=np.empty(2*n,np.int16); iq[0::2]=np.round(y.real*32767); iq[1::2]=np.round(y.imag*32767); iq.tofile('lp600k.cs16')
PY
D="driver=rxsim,replay=$L/lp600k.cs16,replay_format=cs16,replay_rate=2e6,replay_freq=100e6"
truth=$(python3 -c "import math; print(round(10*math.log10(4e-4*1.5/2048),1))"); echo "passband noise: $truth dBFS/bin; tone 20 dB over it"
bad=""
floor_of() { python3 -c "
import json,sys
try: d=json.load(open('$1'))
except Exception: print('none'); sys.exit()
c=d['captures'][0] if 'captures' in d else d
print(c.get('noise_floor_db'))"; }
for w in "" "-w 600k"; do
  "$RXN" --sim capture -d "$D" -f 100M -r 2M -t 0.2 $w > c.txt 2>&1; echo "capture $w: rc=$?"; grep -E 'bandwidth|noise floor|peaks|^status' c.txt | cut -c1-170
  "$RXN" --sim capture -d "$D" -f 100M -r 2M -t 0.2 $w --json > c.json 2>/dev/null
  panics c.txt && bad="$bad panic"
  fl=$(floor_of c.json); echo "  noise_floor_db: $fl"
  case "$fl" in None|none) [ -n "$w" ] && bad="$bad no-floor-with-bandwidth-set";;
    *) python3 -c "import sys; sys.exit(abs($fl-($truth))<1)" && bad="$bad capture${w:+-w}-floor-$fl";; esac
  grep -q 'in an emission' c.txt && bad="$bad capture${w:+-w}-passband-an-emission"
done
timeout 120 "$RXN" --sim sweep -d "$D" --start-hz 95M --stop-hz 105M -r 2M -B 2k --dwell-s 0.05 > s.txt 2>&1; echo "sweep: rc=$?"
grep -E '^sweep|noise floor|^ +[0-9] ' s.txt | head -5 | cut -c1-170
panics s.txt && bad="$bad panic"
grep -q 'noise floor -1[0-9][0-9]' s.txt && bad="$bad sweep-floor-in-the-dips"
grep -q 'in an emission' s.txt && bad="$bad sweep-passbands-emissions"
[ -n "$bad" ] && { echo "broken: a live floor read in the receive filter's stopband:$bad"; exit 0; }; echo held; exit 1
