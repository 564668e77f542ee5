#!/bin/bash
# o270: another SDR tool reading rxsim (the simulated radio `rxnode --sim` installs) through Debian's python3-soapysdr:
# a burst (activateStream with SOAPY_SDR_END_BURST and numElems 1000, a USRP's "num samps and done") was accepted and
# ignored: reads went on handing out 16384 samples each for as long as they were made, none flagged END_BURST.
# A burst asked of numElems without END_BURST (which rxsim cannot continue) and an unknown flag were accepted alike;
# a timed stop (deactivateStream with SOAPY_SDR_HAS_TIME 50 ms after the first sample) stopped the stream at once.
# Expected (docs/hardware.md#the-simulated-radio-rxsim): exactly 1000 samples, the read that ends them flagged
# SOAPY_SDR_END_BURST, then reads time out until the stream is activated again; a continuous activation streams on;
# the timed stop gives the 50 000 samples before its time, the last read flagged alike; what rxsim does not model is
# refused with SOAPY_SDR_NOT_SUPPORTED (-5). Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o270.XXXXXX); cd "$L"; export XDG_CACHE_HOME=$L/cache
"$RXN" --sim inventory --dry-run --json > inv.txt 2>&1 || { echo "broken: rxnode --sim inventory failed: $(head -c 200 inv.txt)"; exit 0; }
export SOAPY_SDR_PLUGIN_PATH=$(ls "$L"/cache/rxnode/librxsim-*.so) SOAPY_SDR_ROOT=$L/cache/rxnode/empty-soapy-root
/usr/bin/python3 - > p.txt 2>&1 <<'PY'
import SoapySDR, numpy as np
from SoapySDR import SOAPY_SDR_RX as RX, SOAPY_SDR_CF32, SOAPY_SDR_END_BURST as END, SOAPY_SDR_ONE_PACKET, SOAPY_SDR_HAS_TIME
d = SoapySDR.Device(dict(driver="rxsim", serial="o270", pace="1"))
d.setSampleRate(RX, 0, 1e6); d.setFrequency(RX, 0, 100e6)
s = d.setupStream(RX, SOAPY_SDR_CF32); buf = np.zeros(d.getStreamMTU(s), np.complex64)
def reads(k):
    got, ends = [], 0
    for _ in range(k):
        r = d.readStream(s, [buf], len(buf), timeoutUs=200000)
        got.append(r.ret); ends += r.ret > 0 and (r.flags & END) != 0
    return got, ends
print("BURST activate", d.activateStream(s, END, 0, 1000))
got, ends = reads(4)
print("BURST reads", got, "samples", sum(x for x in got if x > 0), "END_BURST flags", ends)
d.deactivateStream(s)
print("AGAIN activate", d.activateStream(s, END, 0, 5000))
got, ends = reads(4)
print("AGAIN samples", sum(x for x in got if x > 0), "END_BURST flags", ends)
d.deactivateStream(s)
print("CONT activate", d.activateStream(s, 0, 0, 0))
got, ends = reads(3)
print("CONT samples", sum(x for x in got if x > 0), "END_BURST flags", ends)
d.deactivateStream(s)
print("MORE activate", d.activateStream(s, 0, 0, 1000)); d.deactivateStream(s)
print("FLAG activate", d.activateStream(s, SOAPY_SDR_ONE_PACKET, 0, 0)); d.deactivateStream(s)
d.activateStream(s); r = d.readStream(s, [buf], len(buf), timeoutUs=200000)
print("STOP deactivate", d.deactivateStream(s, SOAPY_SDR_HAS_TIME, r.timeNs + 50000000))
got, ends = reads(6)
print("STOP samples", r.ret + sum(x for x in got if x > 0), "END_BURST flags", ends)
d.deactivateStream(s); d.closeStream(s)
PY
cat p.txt; panics p.txt && { echo "broken: a panic"; exit 0; }
grep -q '^STOP samples' p.txt || { echo "broken: the SoapySDR client could not run it all: $(tail -1 p.txt)"; exit 0; }
bad=$(awk '
  /^BURST reads/ { if ($(NF-3) != 1000 || $NF != 1) printf " a burst of 1000 gave %s samples, %s flagged END_BURST;", $(NF-3), $NF }
  /^AGAIN samples/ { if ($3 != 5000 || $NF != 1) printf " a second burst of 5000 gave %s samples, %s flagged END_BURST;", $3, $NF }
  /^CONT samples/ { if ($3 < 16384 || $NF != 0) printf " a continuous stream gave %s samples, %s flagged END_BURST;", $3, $NF }
  /activate/ && $1 == "BURST" && $3 != 0 { printf " the burst activation returned %s;", $3 }
  /^MORE activate/ { if ($3 != -5) printf " numElems 1000 without END_BURST accepted (%s);", $3 }
  /^FLAG activate/ { if ($3 != -5) printf " an unknown activation flag accepted (%s);", $3 }
  /^STOP samples/ { if ($3 != 50000 || $NF != 1) printf " a stop timed 50 ms after the first sample gave %s samples, %s flagged END_BURST;", $3, $NF }' p.txt)
[ -n "$bad" ] && { echo "broken: rxsim does not keep a burst or a timed stop as a driver does:$bad"; exit 0; }; echo held; exit 1
