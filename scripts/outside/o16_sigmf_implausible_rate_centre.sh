#!/bin/bash
# o16: recordings from other tools: a SigMF meta's core:sample_rate and core:frequency have no plausibility bound (the
# same values as flags are refused: "1e-300 S/s is implausible (below 1 kS/s)", frequencies 1 kHz … 300 GHz).
# core:sample_rate 1e-300 is analysed as "0.000000 MS/s (2e305 s)"; core:frequency 1.7e308 prints a 309-digit centre;
# and with core:frequency 1.7e308 + core:sample_rate 1e308 (the axis end overflows to infinity) `analyze --plot` never
# returns (plotters' key-point loop, as in o1; killed after 30 s). A downloaded recording is enough. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o16.XXXXXX); cd "$L"
python3 - <<'PY'
import json, numpy as np
fs=2e6; n=200000; t=np.arange(n)/fs
x=(0.1*np.exp(2j*np.pi*1e5*t)+0.001*(np.random.randn(n)+1j*np.random.randn(n))).astype(np.complex64)
for name, rate, f in (('tiny', 1e-300, 915e6), ('inf', 1e308, 1.7e308)):
    x.tofile(name+'.sigmf-data')
    json.dump({"global":{"core:datatype":"cf32_le","core:sample_rate":rate,"core:version":"1.2.0"},
               "captures":[{"core:sample_start":0,"core:frequency":f}],"annotations":[]}, open(name+'.sigmf-meta','w'))
PY
"$RXN" analyze tiny.sigmf-meta > tiny.out 2>&1; echo "rate 1e-300: rc=$? $(grep samples tiny.out | cut -c1-110)…"
timeout 30 "$RXN" analyze inf.sigmf-meta --plot inf.png > inf.out 2>&1; rc=$?; echo "centre 1.7e308, rate 1e308, --plot: rc=$rc $( [ $rc = 124 ] && echo '(killed after 30 s)')"
[ $rc -eq 124 ] && { echo "broken: implausible SigMF rate/centre accepted; --plot hangs on an axis that overflows"; exit 0; }; echo held; exit 1
