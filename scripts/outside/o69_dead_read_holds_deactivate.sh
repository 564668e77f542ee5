#!/bin/bash
# o69: another SDR tool reading rxsim (the simulated radio `rxnode --sim` installs): a client reads on one thread and
# stops the stream from another (SoapySDRServer's worker and handler threads do exactly this). With rxsim's `dead_hz`
# fault (tuned inside a dead band: nothing arrives) a read slept out its whole timeout holding the stream lock, so
# python3-soapysdr's deactivateStream 0.3 s into a 3 s read took 2.7 s. Expected, as a driver whose sample queue stays
# empty: the deactivate returns at once and ends the waiting read (SOAPY_SDR_TIMEOUT). Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o69.XXXXXX); cd "$L"; export XDG_CACHE_HOME=$L/cache
"$RXN" --sim inventory --dry-run --json > inv.txt 2>&1 || { echo "broken: rxnode --sim inventory failed: $(head -c 200 inv.txt)"; exit 0; }
export SOAPY_SDR_PLUGIN_PATH=$(ls "$L"/cache/rxnode/librxsim-*.so) SOAPY_SDR_ROOT=$L/cache/rxnode/empty-soapy-root
/usr/bin/python3 - > p.txt 2>&1 <<'PY'
import SoapySDR, numpy as np, threading, time
from SoapySDR import SOAPY_SDR_RX, SOAPY_SDR_CF32
d = SoapySDR.Device(dict(driver="rxsim", serial="o69", dead_hz="99e6:101e6"))
d.setSampleRate(SOAPY_SDR_RX, 0, 1e6); d.setFrequency(SOAPY_SDR_RX, 0, 100e6)
s = d.setupStream(SOAPY_SDR_RX, SOAPY_SDR_CF32); d.activateStream(s)
buf = np.zeros(4096, np.complex64); out = {}
def reader():
    t = time.monotonic(); r = d.readStream(s, [buf], 4096, timeoutUs=3000000); out['read'] = (r.ret, time.monotonic() - t)
th = threading.Thread(target=reader); th.start(); time.sleep(0.3)
t = time.monotonic(); d.deactivateStream(s); out['deact'] = time.monotonic() - t
th.join(); d.closeStream(s)
print("deactivate %.2f s; read ret %d after %.2f s" % (out['deact'], out['read'][0], out['read'][1]))
PY
cat p.txt; panics p.txt && { echo "broken: a panic"; exit 0; }
line=$(grep '^deactivate' p.txt) || { echo "broken: the SoapySDR client failed: $(tail -1 p.txt)"; exit 0; }
set -- $line
awk -v d="$2" -v w="$8" 'BEGIN { exit !(d < 0.2 && w < 1.5) }' || { echo "broken: a read that gets nothing holds up deactivateStream: $line"; exit 0; }
[ "$6" = "-1" ] || { echo "broken: the waiting read returned $6, not SOAPY_SDR_TIMEOUT (-1)"; exit 0; }
echo held; exit 1
