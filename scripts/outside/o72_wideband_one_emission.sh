#!/bin/bash
# o72: a confident wrong number, another tool's recording: an OFDM/LTE-like band 9 MHz wide, 30 dB over the floor,
# recorded for 0.4 ms (11 Welch averages), read by `analyze`: every ripple of the band was a "peak" (8 of them, each
# "SNR 30 dB", 1–2 MHz apart) and the band's level over the tuned frequency "a carrier or the radio's DC offset at the
# centre"; a narrow carrier 20 dB down beside an FM-like station never made the list. Expected: the band one emission
# (one peak with its extent), no centre carrier, and the separate carrier listed. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o72.XXXXXX); cd "$L"
python3 - <<'PY'
import numpy as np
rng=np.random.default_rng(3)
fs=30.72e6; n=2048*6
x=(rng.normal(size=n)+1j*rng.normal(size=n))*0.002
X=np.fft.fft((rng.normal(size=n)+1j*rng.normal(size=n))*0.05); f=np.fft.fftfreq(n,1/fs)
X[np.abs(f-3e6)>4.5e6]=0
x=x+np.fft.ifft(X)
iq=np.empty(2*n,np.int16); iq[0::2]=np.round(x.real*32767); iq[1::2]=np.round(x.imag*32767)
iq.tofile('band.cs16')
# An FM-like station at +300 kHz (75 kHz deviation) and a plain carrier at -500 kHz, 20 dB below it.
fs=2.048e6; n=int(fs); t=np.arange(n)/fs
a=np.cumsum(rng.normal(size=n)); a=np.convolve(a-a.mean(),np.ones(200)/200,'same'); a/=abs(a).max()
x=0.3*np.exp(1j*(2*np.pi*300e3*t+2*np.pi*75e3*np.cumsum(a)/fs))+0.03*np.exp(-2j*np.pi*500e3*t)
x+=(rng.normal(size=n)+1j*rng.normal(size=n))*0.003
u=np.empty(2*n,np.uint8); u[0::2]=np.clip(np.round(x.real*127.5+127.5),0,255); u[1::2]=np.clip(np.round(x.imag*127.5+127.5),0,255)
u.tofile('fm.cu8')
PY
bad=""
"$RXN" analyze band.cs16 -r 30.72M -f 1842.5M > band.txt 2>&1; echo "analyze band.cs16: rc=$?"; sed -n '/^peaks/,/^clock/p' band.txt
panics band.txt && bad="$bad panic"
n=$(sed -n '/^peaks/,/^clock/p' band.txt | grep -c 'dBFS  SNR')
[ "$n" = 1 ] || bad="$bad band-as-$n-peaks"
grep -q 'in an emission' band.txt || bad="$bad no-extent"
grep -q 'DC offset at the centre' band.txt && bad="$bad band-called-centre-carrier"
"$RXN" analyze fm.cu8 -r 2.048M -f 100M > fm.txt 2>&1; echo "analyze fm.cu8: rc=$?"; sed -n '/^peaks/,/^clock/p' fm.txt
panics fm.txt && bad="$bad panic"
grep -q '99\.500000 MHz' fm.txt || bad="$bad carrier-beside-station-missing"
[ -n "$bad" ] && { echo "broken: a wideband signal read as many carriers:$bad"; exit 0; }; echo held; exit 1
