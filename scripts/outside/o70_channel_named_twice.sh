#!/bin/bash
# o70: another SDR tool reading rxsim (the simulated radio `rxnode --sim` installs): rxsim has one RX channel
# (`SoapySDRUtil --probe`: "Channels: 1 Rx"), yet a stream of channels [0, 0] was accepted, and each read filled the
# first of the two buffers the client passes and left the second as it was (a python3-soapysdr client saw its second
# buffer still holding its fill value). Expected, as a one-channel driver does: set-up refused, naming why.
# Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o70.XXXXXX); cd "$L"; export XDG_CACHE_HOME=$L/cache
"$RXN" --sim inventory --dry-run --json > inv.txt 2>&1 || { echo "broken: rxnode --sim inventory failed: $(head -c 200 inv.txt)"; exit 0; }
export SOAPY_SDR_PLUGIN_PATH=$(ls "$L"/cache/rxnode/librxsim-*.so) SOAPY_SDR_ROOT=$L/cache/rxnode/empty-soapy-root
SoapySDRUtil --probe="driver=rxsim,serial=o70" 2>&1 | grep 'Channels'
/usr/bin/python3 - > p.txt 2>&1 <<'PY'
import SoapySDR, numpy as np
from SoapySDR import SOAPY_SDR_RX, SOAPY_SDR_CF32
d = SoapySDR.Device(dict(driver="rxsim", serial="o70", tone_hz="100.1e6"))
d.setSampleRate(SOAPY_SDR_RX, 0, 1e6)
try:
    s = d.setupStream(SOAPY_SDR_RX, SOAPY_SDR_CF32, [0, 0])
except Exception as e:
    print("refused:", e); raise SystemExit
d.activateStream(s)
a = np.full(4096, 7 + 7j, np.complex64); b = np.full(4096, 7 + 7j, np.complex64)
r = d.readStream(s, [a, b], 4096, timeoutUs=1000000)
d.deactivateStream(s); d.closeStream(s)
print("accepted: read %d; buffer 0 changed %d, buffer 1 changed %d" % (r.ret, np.sum(a[:max(r.ret, 0)] != 7 + 7j), np.sum(b[:max(r.ret, 0)] != 7 + 7j)))
PY
cat p.txt; panics p.txt && { echo "broken: a panic"; exit 0; }
grep -q '^refused:.*one channel' p.txt && { echo held; exit 1; }
echo "broken: a stream of channel 0 twice on a one-channel radio: $(tail -1 p.txt)"; exit 0
