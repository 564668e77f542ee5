#!/bin/bash
# o67: another SDR tool reading rxsim (the simulated radio `rxnode --sim` installs): a client picks a stream format
# from getStreamFormats (`SoapySDRUtil --probe` prints the list, GNU Radio and SoapyRemote choose from it) and must be
# able to open it. rxsim listed CS8 on its transmit channel ("Stream formats: CF32, CS16, CS8" in --probe) while its
# setupStream refused it there ("rxsim: unsupported stream format CS8"). Expected: each direction lists exactly the
# formats it opens. Only stream set-up and close: nothing is activated. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o67.XXXXXX); cd "$L"; export XDG_CACHE_HOME=$L/cache
"$RXN" --sim inventory --dry-run --json > inv.txt 2>&1 || { echo "broken: rxnode --sim inventory failed: $(head -c 200 inv.txt)"; exit 0; }
export SOAPY_SDR_PLUGIN_PATH=$(ls "$L"/cache/rxnode/librxsim-*.so) SOAPY_SDR_ROOT=$L/cache/rxnode/empty-soapy-root
SoapySDRUtil --probe="driver=rxsim,serial=o67" 2>&1 | grep -E '^-- |Stream formats'
/usr/bin/python3 - > p.txt 2>&1 <<'PY'
import SoapySDR
from SoapySDR import SOAPY_SDR_RX, SOAPY_SDR_TX
d = SoapySDR.Device(dict(driver="rxsim", serial="o67"))
for name, di in (("RX", SOAPY_SDR_RX), ("TX", SOAPY_SDR_TX)):
    for f in d.getStreamFormats(di, 0):
        try:
            s = d.setupStream(di, f); d.closeStream(s); print(name, f, "opens")
        except Exception as e:
            print(name, f, "listed but refused:", e)
PY
cat p.txt; panics p.txt && { echo "broken: a panic"; exit 0; }
grep -q ' opens' p.txt || { echo "broken: the SoapySDR client opened nothing: $(tail -1 p.txt)"; exit 0; }
grep -q 'refused' p.txt && { echo "broken: rxsim lists a stream format it refuses: $(grep refused p.txt | tr '\n' ' ')"; exit 0; }
echo held; exit 1
