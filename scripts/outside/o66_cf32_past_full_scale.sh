#!/bin/bash
# o66: another SDR tool reading rxsim (the simulated radio `rxnode --sim` installs): a real driver's CF32 is its
# converter's integers scaled into ±1.0, never beyond. rxsim's CF32 stream went past it: a +3 dBFS tone read through
# Debian's python3-soapysdr came out with |I| up to 1.41 and a mean power of +3.0 dBFS, while the same radio's CS16
# and CS8 streams clipped at full scale (+1.3 dBFS), and `rxnode capture` (CF32) reported `mean power 3.0 dBFS`.
# Expected: CF32 clamped at ±1.0 as CS16/CS8 are, the three formats at one mean power. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o66.XXXXXX); cd "$L"; export XDG_CACHE_HOME=$L/cache
"$RXN" --sim inventory --dry-run --json > inv.txt 2>&1 || { echo "broken: rxnode --sim inventory failed: $(head -c 200 inv.txt)"; exit 0; }
export SOAPY_SDR_PLUGIN_PATH=$(ls "$L"/cache/rxnode/librxsim-*.so) SOAPY_SDR_ROOT=$L/cache/rxnode/empty-soapy-root
/usr/bin/python3 - > p.txt 2>&1 <<'PY'
import SoapySDR, numpy as np
from SoapySDR import SOAPY_SDR_RX, SOAPY_SDR_CF32, SOAPY_SDR_CS16, SOAPY_SDR_CS8
d = SoapySDR.Device(dict(driver="rxsim", serial="o66", tone_hz="100.1e6", tone_dbfs="3"))
d.setSampleRate(SOAPY_SDR_RX, 0, 1e6); d.setFrequency(SOAPY_SDR_RX, 0, 100e6)
for fmt, dt, fs in [(SOAPY_SDR_CF32, np.complex64, 1.0), (SOAPY_SDR_CS16, np.int16, 32767.0), (SOAPY_SDR_CS8, np.int8, 127.0)]:
    s = d.setupStream(SOAPY_SDR_RX, fmt); mtu = d.getStreamMTU(s); d.activateStream(s)
    per = 1 if dt == np.complex64 else 2; buf = np.zeros(mtu * per, dt); got = []
    for _ in range(12):
        r = d.readStream(s, [buf], mtu, timeoutUs=1000000)
        if r.ret > 0: got.append(buf[:r.ret * per].copy())
    d.deactivateStream(s); d.closeStream(s)
    x = np.concatenate(got)
    if per == 2: x = (x[0::2].astype(float) + 1j * x[1::2]) / fs
    print("%s max|I|,|Q| %.4f mean_power_dBFS %.2f" % (fmt, max(np.abs(x.real).max(), np.abs(x.imag).max()), 10 * np.log10(np.mean(np.abs(x) ** 2))))
PY
cat p.txt; panics p.txt && { echo "broken: a panic"; exit 0; }
grep -q '^CS8 ' p.txt || { echo "broken: the SoapySDR client could not read all three formats: $(tail -1 p.txt)"; exit 0; }
bad=$(awk '{ if ($3 > 1.0) printf " %s peak %s", $1, $3; p[$1] = $5 } END { d = p["CF32"] - p["CS16"]; if (d > 0.05 || d < -0.05) printf " CF32 at %s dBFS, CS16 at %s", p["CF32"], p["CS16"] }' p.txt)
"$RXN" capture --sim -d driver=rxsim,serial=o66c,tone_hz=100.1e6,tone_dbfs=3 -f 100M -r 1M -t 0.2 > c.txt 2>&1; grep -o 'mean power [^;]*' c.txt
grep -q 'mean power 3.0 dBFS' c.txt && bad="$bad; capture's mean power 3.0 dBFS"
[ -n "$bad" ] && { echo "broken: rxsim's CF32 goes past full scale:$bad"; exit 0; }; echo held; exit 1
