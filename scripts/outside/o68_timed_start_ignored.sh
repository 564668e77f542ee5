#!/bin/bash
# o68: another SDR tool reading rxsim (the simulated radio `rxnode --sim` installs): rxsim advertises hardware time
# (`SoapySDRUtil --probe`: "Timestamps: YES"), so a client that syncs two radios asks for a timed start
# (activateStream with SOAPY_SDR_HAS_TIME, 0.5 s ahead). rxsim ignored it: samples at once, the first stamped about
# 0.5 s before the start asked; a start time already past was accepted too. Expected, as a radio with a time counter
# (a USRP) does: nothing before the time, the first sample stamped the time asked, a late time SOAPY_SDR_TIME_ERROR.
# Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o68.XXXXXX); cd "$L"; export XDG_CACHE_HOME=$L/cache
"$RXN" --sim inventory --dry-run --json > inv.txt 2>&1 || { echo "broken: rxnode --sim inventory failed: $(head -c 200 inv.txt)"; exit 0; }
export SOAPY_SDR_PLUGIN_PATH=$(ls "$L"/cache/rxnode/librxsim-*.so) SOAPY_SDR_ROOT=$L/cache/rxnode/empty-soapy-root
SoapySDRUtil --probe="driver=rxsim,serial=o68" 2>&1 | grep 'Timestamps'
/usr/bin/python3 - > p.txt 2>&1 <<'PY'
import SoapySDR, numpy as np
from SoapySDR import SOAPY_SDR_RX, SOAPY_SDR_CF32, SOAPY_SDR_HAS_TIME
d = SoapySDR.Device(dict(driver="rxsim", serial="o68"))
d.setSampleRate(SOAPY_SDR_RX, 0, 1e6)
s = d.setupStream(SOAPY_SDR_RX, SOAPY_SDR_CF32); buf = np.zeros(4096, np.complex64)
start = d.getHardwareTime() + 500000000
print("activate at start: ret", d.activateStream(s, SOAPY_SDR_HAS_TIME, start))
r = d.readStream(s, [buf], 4096, timeoutUs=100000)
print("read 0.1 s: ret", r.ret)
while r.ret <= 0:
    r = d.readStream(s, [buf], 4096, timeoutUs=2000000)
print("first sample %+.6f s from the start asked" % ((r.timeNs - start) / 1e9))
d.deactivateStream(s)
print("activate 1 ms in the past: ret", d.activateStream(s, SOAPY_SDR_HAS_TIME, d.getHardwareTime() - 1000000))
d.deactivateStream(s); d.closeStream(s)
PY
cat p.txt; panics p.txt && { echo "broken: a panic"; exit 0; }
grep -q '^first sample' p.txt || { echo "broken: the SoapySDR client read nothing: $(tail -1 p.txt)"; exit 0; }
bad=""
grep -q '^read 0.1 s: ret [1-9]' p.txt && bad="$bad samples before the start;"
grep -q '^first sample +0.000000 s' p.txt || bad="$bad $(grep '^first sample' p.txt);"
grep -q 'in the past: ret -6$' p.txt || bad="$bad a past start time: $(grep 'in the past' p.txt | sed 's/.*ret/ret/');"
[ -n "$bad" ] && { echo "broken: rxsim ignores a timed start:$bad"; exit 0; }; echo held; exit 1
