#!/bin/bash
# o140: a confident wrong number, another tool's recording: noise through a receive filter narrower than the rate
# (200 / 600 / 900 kHz of 2 MS/s, as a radio's bandwidth set below the rate or a tool that filtered before saving),
# stored as cs16 (its quantisation noise fills the stopband) with a tone 20 dB over the passband's noise per bin.
# The floor was the median bin, which lay in the stopband: 64 dB low (-129 dBFS/bin for a passband at -65), so the
# passband's own noise was "an emission" 220 kHz–990 kHz wide and the tone had "SNR 88 dB". Expected: no floor
# from the data alone (the passband and a signal tuned to the centre look the same) or a true one, never one in the
# stopband, no emission made of the passband's noise; and with the radio's bandwidth given (`-w`) the passband's
# floor and the tone's true SNR. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o140.XXXXXX); cd "$L"
python3 - <<'PY'
import numpy as np
rng=np.random.default_rng(7); fs=2e6; n=1<<19; t=np.arange(n)/fs; f=np.fft.fftfreq(n,1/fs)
for bw in (200e3,600e3,900e3):
    X=np.fft.fft((rng.normal(size=n)+1j*rng.normal(size=n))*0.02/np.sqrt(2)); a=np.abs(f); e=0.05*bw
    h=np.clip((bw/2+e-a)/(2*e),0,1); h=0.5-0.5*np.cos(np.pi*h)
    y=np.fft.ifft(X*h)+10**((10*np.log10(4e-4*1.5/2048)+20)/20)*np.exp(2j*np.pi*(bw/4+1234.5)*t)
    iq=np.empty(2*n,np.int16); iq[0::2]=np.round(y.real*32767); iq[1::2]=np.round(y.imag*32767); iq.tofile('lp%dk.cs16'%(bw/1e3))
PY
truth=$(python3 -c "import math; print(round(10*math.log10(4e-4*1.5/2048),1))"); echo "passband noise: $truth dBFS/bin; tone 20 dB over it"
bad=""
for k in 200 600 900; do
  "$RXN" analyze lp${k}k.cs16 -r 2M -f 100M > a$k.txt 2>&1; echo "analyze lp${k}k.cs16: rc=$?"; grep -E '^noise floor|^peaks|^  +[0-9]' a$k.txt | cut -c1-160
  panics a$k.txt && bad="$bad panic"
  fl=$(sed -n 's/^noise floor *\(-[0-9.]*\) dBFS.*/\1/p' a$k.txt)
  [ -n "$fl" ] && python3 -c "import sys; sys.exit(abs($fl-($truth))<1)" && bad="$bad ${k}k-floor-$fl"
  grep -q 'in an emission' a$k.txt && bad="$bad ${k}k-passband-an-emission"
  "$RXN" analyze lp${k}k.cs16 -r 2M -f 100M -w ${k}k > b$k.txt 2>&1; echo "analyze lp${k}k.cs16 -w ${k}k: rc=$?"; grep -E '^noise floor|^peaks|rror' b$k.txt | cut -c1-160
  fl=$(sed -n 's/^noise floor *\(-[0-9.]*\) dBFS.*/\1/p' b$k.txt); snr=$(sed -n 's/^peaks .*SNR *\([0-9.]*\) dB.*/\1/p' b$k.txt)
  python3 -c "import sys; sys.exit(abs(float('${fl:-nan}')-($truth))<0.5 and abs(float('${snr:-nan}')-20)<1)" && bad="$bad ${k}k-with-bandwidth-floor-${fl:-none}-snr-${snr:-none}"
done
[ -n "$bad" ] && { echo "broken: the noise floor of filtered noise read in the stopband:$bad"; exit 0; }; echo held; exit 1
