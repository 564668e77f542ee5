#!/bin/bash
# o356: a `.sigmf-meta` saved with a UTF-8 byte order mark (what Windows Notepad wrote before Windows 10 1903, and
# PowerShell 5's `Out-File -Encoding utf8` still writes) was refused by `rxnode analyze` as "invalid SigMF meta JSON:
# expected value at line 1 column 1": the person sees a valid JSON file in the editor and no word of the invisible
# mark. JSON has no BOM (RFC 8259 §8.1) and the sigmf package refuses it too ("Unexpected UTF-8 BOM"), so refusing is
# right; a UTF-16 meta (an editor's "Unicode") was called an I/O error, "stream did not contain valid UTF-8".
# Expected (docs/operator.md#analysing-a-recording): refused naming the byte order mark, for the pair and inside a
# .sigmf archive; the same meta without it reads. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o356.XXXXXX); cd "$L"
python3 - <<'PY'
import numpy as np, tarfile, io
fs = 2e6; n = 1 << 16; t = np.arange(n) / fs
x = (0.3 * np.exp(2j * np.pi * 100e3 * t)).astype(np.complex64)
meta = ('{"global": {"core:datatype": "cf32_le", "core:sample_rate": 2000000, "core:version": "1.2.0"}, '
        '"captures": [{"core:sample_start": 0, "core:frequency": 100e6}], "annotations": []}')
for name, data in (("plain", meta.encode()), ("bom", b"\xef\xbb\xbf" + meta.encode()), ("utf16", meta.encode("utf-16"))):
    x.tofile(name + ".sigmf-data"); open(name + ".sigmf-meta", "wb").write(data)
with tarfile.open("bom.sigmf", "w") as tar:
    for member, data in (("bom/bom.sigmf-meta", b"\xef\xbb\xbf" + meta.encode()), ("bom/bom.sigmf-data", x.tobytes())):
        i = tarfile.TarInfo(member); i.size = len(data); tar.addfile(i, io.BytesIO(data))
PY
for f in plain.sigmf-meta bom.sigmf-meta utf16.sigmf-meta bom.sigmf; do
  "$RXN" analyze "$f" > "out.$f.txt" 2>&1; echo "analyze $f: rc=$? $(grep -m1 -oE 'error: .{0,200}|peaks.{0,30}' "out.$f.txt")"
done
panics out.*.txt && { echo "broken: a panic"; exit 0; }
grep -q 'peaks' out.plain.sigmf-meta.txt || { echo "broken: the meta without a BOM no longer reads"; exit 0; }
bad=""
for f in bom.sigmf-meta bom.sigmf; do grep -q 'byte order mark' "out.$f.txt" || bad="$bad $f refused without naming the BOM;"; done
grep -q 'UTF-16' out.utf16.sigmf-meta.txt || bad="$bad the UTF-16 meta not named UTF-16;"
[ -n "$bad" ] && { echo "broken:$bad"; exit 0; }; echo held; exit 1
