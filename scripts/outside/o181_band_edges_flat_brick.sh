#!/bin/bash
# o181: another SDR tool reading rxsim (the simulated radio `rxnode --sim` installs) through Debian's python3-soapysdr:
# its band edges were a flat brick with no receive filter. A -20 dBFS tone read -20.000 dBFS at 0.1, 0.45 and 0.49 of
# the sample rate off the centre alike, and its noise was as strong at +-0.48 fs as in the middle of the band.
# Expected (docs/hardware.md#rx-gain-and-levels): an anti-alias filter, flat to +-0.4 fs, then a cos^2 roll-off in
# amplitude to the band edge: -6.02 dB at +-0.45 fs, -16.69 dB at 0.475 fs, -32.23 dB at 0.49 fs (a tone within 0.1 dB
# of it), the noise rolling off alike. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o181.XXXXXX); cd "$L"; export XDG_CACHE_HOME=$L/cache
"$RXN" --sim inventory --dry-run --json > inv.txt 2>&1 || { echo "broken: rxnode --sim inventory failed: $(head -c 200 inv.txt)"; exit 0; }
export SOAPY_SDR_PLUGIN_PATH=$(ls "$L"/cache/rxnode/librxsim-*.so) SOAPY_SDR_ROOT=$L/cache/rxnode/empty-soapy-root
/usr/bin/python3 - > p.txt 2>&1 <<'PY'
import SoapySDR, numpy as np
from SoapySDR import SOAPY_SDR_RX as RX, SOAPY_SDR_CF32
RATE = 1e6
def grab(d, n):
    s = d.setupStream(RX, SOAPY_SDR_CF32); mtu = d.getStreamMTU(s); d.activateStream(s)
    buf = np.zeros(mtu, np.complex64); got = []; have = 0
    while have < n:
        r = d.readStream(s, [buf], min(mtu, n - have), timeoutUs=2000000)
        if r.ret <= 0: raise SystemExit("read returned %d" % r.ret)
        got.append(buf[:r.ret].copy()); have += r.ret
    d.deactivateStream(s); d.closeStream(s); return np.concatenate(got).astype(complex)
def dev(serial, **kw):
    d = SoapySDR.Device(dict(driver="rxsim", serial=serial, pace="0", **kw))
    d.setSampleRate(RX, 0, RATE); d.setFrequency(RX, 0, 100e6); return d
for x in [0.1, 0.4, 0.42, -0.45, 0.475, 0.49]:
    v = grab(dev("o181t%g" % x, tone_hz=str(100e6 + x * RATE), tone_dbfs="-20", noise_dbfs="-100"), 1 << 16)
    a = np.mean(v * np.exp(-2j * np.pi * x * np.arange(len(v))))
    c = np.cos(np.pi / 2 * max(0.0, (abs(x) - 0.4) / 0.1)) ** 2
    print("TONE at %+.3f fs %.3f dBFS model %.3f" % (x, 20 * np.log10(abs(a)), -20 + 20 * np.log10(c)))
v = grab(dev("o181n", noise_dbfs="-40"), 1 << 20).reshape(-1, 1024)
P = np.mean(abs(np.fft.fft(v, axis=1)) ** 2, axis=0); f = abs(np.fft.fftfreq(1024))
band = lambda a, b: 10 * np.log10(np.mean(P[(f >= a) & (f < b)]))
mid = band(0, 0.35)
print("NOISE at 0.45 fs %.2f dB at 0.48 fs %.2f dB (against 0-0.35 fs)" % (band(0.445, 0.455) - mid, band(0.475, 0.485) - mid))
PY
cat p.txt; panics p.txt && { echo "broken: a panic"; exit 0; }
grep -q '^NOISE ' p.txt || { echo "broken: the SoapySDR client could not read it all: $(tail -1 p.txt)"; exit 0; }
bad=$(awk '
  /^TONE/ { d = $5 - $8; if (d > 0.1 || d < -0.1) printf " a tone at %s fs read %s dBFS, the filter puts it at %s;", $3, $5, $8 }
  /^NOISE/ { if ($5 > -5 || $5 < -7) printf " noise at 0.45 fs %s dB (about -6 expected);", $5; if ($10 > -15) printf " noise at 0.48 fs %s dB (below -15 expected);", $10 }' p.txt)
[ -n "$bad" ] && { echo "broken: rxsim's band edges are not its anti-alias filter's:$bad"; exit 0; }; echo held; exit 1
