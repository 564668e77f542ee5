#!/bin/bash
# o3: honest numbers from other tools' recordings: a SigMF recording written by the `sigmf` Python package carries
# core:sha512 of its dataset. When the data no longer matches it (here: the second half of the file overwritten by a
# different tone, as a truncated/mixed copy would be), the `sigmf` package refuses to read it ("Calculated file hash does
# not match"), but `rxnode analyze` reports its peaks and levels as if the recording were intact, exit 0, with no word
# about the hash. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o3.XXXXXX); cd "$L"
python3 - <<'PY' 2>/dev/null
import numpy as np, sigmf
from sigmf import SigMFFile
fs=2e6; n=200000; t=np.arange(n)/fs
x=(0.1*np.exp(2j*np.pi*1e5*t)+0.001*(np.random.randn(n)+1j*np.random.randn(n))).astype(np.complex64); x.tofile('rec.sigmf-data')
m=SigMFFile(data_file='rec.sigmf-data', global_info={'core:datatype':'cf32_le','core:sample_rate':fs,'core:version':sigmf.__version__})
m.add_capture(0, metadata={'core:frequency':915e6}); m.tofile('rec.sigmf-meta')
y=x.copy(); y[n//2:]=(0.1*np.exp(-2j*np.pi*3e5*t[n//2:])).astype(np.complex64); y.tofile('rec.sigmf-data')
PY
grep -o '"core:sha512": "[0-9a-f]\{16\}' rec.sigmf-meta; echo "data sha512: $(sha512sum rec.sigmf-data | cut -c1-16)"
python3 -c "import sigmf; sigmf.sigmffile.fromfile('rec.sigmf-meta')" 2>&1 | grep -v Deprec | tail -1 | sed 's/^/sigmf package: /'
"$RXN" analyze rec.sigmf-meta > an.txt 2>&1; rc=$?; echo "rxnode analyze rc=$rc:"; grep -E 'peaks|^ {10,}[0-9]|hash|sha' an.txt
[ $rc -eq 0 ] && ! grep -qi 'sha512\|hash' an.txt && { echo "broken: a recording whose data fails its own core:sha512 is analysed as intact (exit 0, no word)"; exit 0; }; echo held; exit 1
