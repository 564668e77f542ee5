#!/bin/bash
# o71: another SDR tool reading rxsim (the simulated radio `rxnode --sim` installs): rxsim declares the setting
# `biastee` (getSettingInfo: a bool, default "false"; `SoapySDRUtil --probe` lists it), and a client shows a radio's
# settings by reading them back (CubicSDR's settings menu, python3-soapysdr's readSetting). Before any write it read
# back "" — neither true nor false. Expected, as a driver reads back its current value: "false", then what was
# written. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o71.XXXXXX); cd "$L"; export XDG_CACHE_HOME=$L/cache
"$RXN" --sim inventory --dry-run --json > inv.txt 2>&1 || { echo "broken: rxnode --sim inventory failed: $(head -c 200 inv.txt)"; exit 0; }
export SOAPY_SDR_PLUGIN_PATH=$(ls "$L"/cache/rxnode/librxsim-*.so) SOAPY_SDR_ROOT=$L/cache/rxnode/empty-soapy-root
SoapySDRUtil --probe="driver=rxsim,serial=o71" 2>&1 | grep -A1 'Bias-T'
/usr/bin/python3 - > p.txt 2>&1 <<'PY'
import SoapySDR
d = SoapySDR.Device(dict(driver="rxsim", serial="o71"))
for a in d.getSettingInfo():
    print("declared %s default %r; reads %r" % (a.key, a.value, d.readSetting(a.key)))
d.writeSetting("biastee", "true"); print("after writing true: reads %r" % d.readSetting("biastee"))
PY
cat p.txt; panics p.txt && { echo "broken: a panic"; exit 0; }
grep -q '^declared biastee' p.txt || { echo "broken: biastee not declared: $(tail -1 p.txt)"; exit 0; }
grep -q "^declared biastee default 'false'; reads 'false'" p.txt && grep -q "reads 'true'" p.txt && { echo held; exit 1; }
echo "broken: a declared setting does not read back its value: $(grep -h declared p.txt)"; exit 0
