#!/bin/bash
# o180: another SDR tool reading rxsim (the simulated radio `rxnode --sim` installs) through Debian's python3-soapysdr:
# the RX gain it advertises (0-60 dB in 1 dB steps, LNA 0-40 in 8, VGA 0-20 in 1) changed nothing in the samples. A
# -40 dBFS tone read -40.000 dBFS at 13 dB and at 37 dB, its noise floor -70.0 at both, a -10 dBFS tone never reached
# full scale at 31 dB, and `rxnode capture -g 10` / `-g 30` measured the same mean power.
# Expected (docs/hardware.md#the-simulated-radio-rxsim): levels hold at 20 dB (the power-on gain); each dB of gain moves
# the tone and the receiver noise by a dB (within 0.1 dB), the 8-bit converter's own floor (-45 dBFS) stays, and a
# tone clips at full scale in CF32, CS16 and CS8 exactly where the gain puts it past 0 dBFS. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o180.XXXXXX); cd "$L"; export XDG_CACHE_HOME=$L/cache
"$RXN" --sim inventory --dry-run --json > inv.txt 2>&1 || { echo "broken: rxnode --sim inventory failed: $(head -c 200 inv.txt)"; exit 0; }
export SOAPY_SDR_PLUGIN_PATH=$(ls "$L"/cache/rxnode/librxsim-*.so) SOAPY_SDR_ROOT=$L/cache/rxnode/empty-soapy-root
/usr/bin/python3 - > p.txt 2>&1 <<'PY'
import SoapySDR, numpy as np
from SoapySDR import SOAPY_SDR_RX as RX, SOAPY_SDR_CF32, SOAPY_SDR_CS16, SOAPY_SDR_CS8
RATE, OFF, N = 1e6, 100e3, 1 << 16
FMT = {SOAPY_SDR_CF32: (np.complex64, 1, 1.0), SOAPY_SDR_CS16: (np.int16, 2, 32767.0), SOAPY_SDR_CS8: (np.int8, 2, 127.0)}
def grab(d, fmt):  # N samples scaled to full scale 1.0, and the largest |I|,|Q| in counts
    dt, per, fs = FMT[fmt]
    s = d.setupStream(RX, fmt); mtu = d.getStreamMTU(s); d.activateStream(s)
    buf = np.zeros(mtu * per, dt); got = []; have = 0
    while have < N:
        r = d.readStream(s, [buf], min(mtu, N - have), timeoutUs=2000000)
        if r.ret <= 0: raise SystemExit("read %s returned %d" % (fmt, r.ret))
        got.append(buf[:r.ret * per].copy()); have += r.ret
    d.deactivateStream(s); d.closeStream(s)
    x = np.concatenate(got)
    if per == 2: x = x[0::2].astype(float) + 1j * x[1::2].astype(float)
    x = x.astype(complex)
    return x / fs, max(abs(x.real).max(), abs(x.imag).max())
def levels(x):  # the tone (its complex amplitude, projected on its exact frequency) and the rest, dBFS
    lo = np.exp(-2j * np.pi * OFF / RATE * np.arange(len(x))); a = np.mean(x * lo)
    return 20 * np.log10(abs(a)), 10 * np.log10(np.mean(abs(x - a / lo) ** 2))
def dev(serial, **kw):
    d = SoapySDR.Device(dict(driver="rxsim", serial=serial, pace="0", tone_hz=str(100e6 + OFF), **kw))
    d.setSampleRate(RX, 0, RATE); d.setFrequency(RX, 0, 100e6); return d
d = dev("o180a", tone_dbfs="-40", noise_dbfs="-70")
print("advertised: gains %s total %s %s power-on %g dB" % (list(d.listGains(RX, 0)), d.getGainRange(RX, 0),
      " ".join("%s %s" % (e, d.getGainRange(RX, 0, e)) for e in d.listGains(RX, 0)), d.getGain(RX, 0)))
t0, f0 = levels(grab(d, SOAPY_SDR_CF32)[0]); print("POWERON tone %.3f floor %.3f" % (t0, f0))
for g in [13, 37]:
    d.setGain(RX, 0, g); t, f = levels(grab(d, SOAPY_SDR_CF32)[0])
    print("CF32 gain %g (read back %g) tone %.3f floor %.3f" % (g, d.getGain(RX, 0), t, f))
d.setGain(RX, 0, "LNA", 24); d.setGain(RX, 0, "VGA", 10); t, f = levels(grab(d, SOAPY_SDR_CF32)[0])
print("ELEMENTS LNA %g VGA %g tone %.3f floor %.3f" % (d.getGain(RX, 0, "LNA"), d.getGain(RX, 0, "VGA"), t, f))
d = dev("o180b", tone_dbfs="-40", noise_dbfs="-50")
for g in [0, 10, 50]:
    d.setGain(RX, 0, g); t, f = levels(grab(d, SOAPY_SDR_CS8)[0]); print("CS8 gain %g tone %.3f floor %.3f" % (g, t, f))
d = dev("o180c", tone_dbfs="-10", noise_dbfs="-80")
for g in [29, 31]:
    d.setGain(RX, 0, g)
    for fmt in [SOAPY_SDR_CF32, SOAPY_SDR_CS16, SOAPY_SDR_CS8]:
        x, pk = grab(d, fmt); t, f = levels(x); print("CLIP gain %g %s tone %.3f peak %g" % (g, fmt, t, pk))
PY
cat p.txt; panics p.txt && { echo "broken: a panic"; exit 0; }
grep -q '^CLIP gain 31 CS8 ' p.txt || { echo "broken: the SoapySDR client could not read it all: $(tail -1 p.txt)"; exit 0; }
bad=$(awk '
  /^CF32 gain 13 / { t13 = $8; f13 = $10 } /^CF32 gain 37 / { t37 = $8; f37 = $10 } /^POWERON/ { p = $3 } /^ELEMENTS/ { e = $7 }
  /^CS8 gain 0 / { c0 = $7 } /^CS8 gain 10 / { c10 = $7; ct10 = $5 } /^CS8 gain 50 / { ct50 = $5 }
  /^CLIP gain 29 CS16 / { u = $6; up = $8 } /^CLIP gain 31 / { pk[$4] = $8 }
  function off(v, want, tol) { d = v - want; return d > tol || d < -tol }
  END {
    if (off(t37 - t13, 24, 0.1)) printf " tone moved %.3f dB from 13 to 37 dB of gain (24 expected);", t37 - t13
    if (off(f37 - f13, 24, 0.2)) printf " noise floor moved %.3f dB from 13 to 37 dB (24 expected);", f37 - f13
    if (off(p, -40, 0.1)) printf " power-on tone %s dBFS, not the -40 asked;", p
    if (off(e - p, 14, 0.1)) printf " LNA 24 + VGA 10 moved the tone %.3f dB from the power-on 20 (14 expected);", e - p
    if (off(ct50 - ct10, 40, 0.1)) printf " CS8 tone moved %.3f dB from 10 to 50 dB of gain (40 expected);", ct50 - ct10
    if (off(c10 - c0, 0, 0.3)) printf " the 8-bit converter floor moved %.3f dB with the gain;", c10 - c0
    if (off(u, -1, 0.1) || up >= 32767) printf " at 29 dB the -10 dBFS tone read %s dBFS, CS16 peak %s (-1 dBFS, unclipped expected);", u, up
    if (pk["CF32"] != 1 || pk["CS16"] != 32767 || pk["CS8"] != 127) printf " at 31 dB (+1 dBFS) peaks CF32 %s CS16 %s CS8 %s, not full scale;", pk["CF32"], pk["CS16"], pk["CS8"]
  }' p.txt)
for g in 10 30; do "$RXN" capture --sim -d driver=rxsim,serial=o180g,tone_hz=100.1e6 -f 100M -r 1M -t 0.2 -g $g > c$g.txt 2>&1; done
m10=$(grep -o 'mean power [-0-9.]*' c10.txt | awk '{print $3}'); m30=$(grep -o 'mean power [-0-9.]*' c30.txt | awk '{print $3}')
echo "rxnode capture: mean power at -g 10: ${m10:-none} dBFS, at -g 30: ${m30:-none} dBFS"
awk -v a="$m10" -v b="$m30" 'BEGIN { exit !(a == "" || b == "" || b - a < 19.8 || b - a > 20.2) }' && bad="$bad rxnode capture's mean power moved '${m10:-none}' -> '${m30:-none}' dBFS for 20 dB of gain"
[ -n "$bad" ] && { echo "broken: rxsim's RX gain is not applied as advertised:$bad"; exit 0; }; echo held; exit 1
