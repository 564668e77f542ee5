#!/bin/bash
# o363: an SDRangel .sdriq recording (32-byte header: rate, centre, start time, sample size 16|24, filler, CRC-32;
# then I/Q int16, or int32 holding 24-bit values at full scale 2^23) was recognised and refused, never read:
# `analyze rec16.sdriq` exit 2 "not read; rxnode reads no .sdriq natively", and the 24-bit one could not be read
# at all (no raw format has its scale). A .sdriq whose header is damaged said only `unsupported IQ format: "sdriq"`.
# Expected (docs/operator.md#analysing-a-recording): read from its header (rate, centre, sample size), named .sdriq
# or told by its CRC under another name; its -6 dBFS tone at 100.1 MHz; a damaged header refused naming the field
# (the CRC-32, the sample size). Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o363.XXXXXX); cd "$L"; export XDG_CACHE_HOME=$L/cache
python3 - <<'PY'
import struct, zlib, numpy as np
fs = 2e6; n = 1 << 16; t = np.arange(n) / fs; rng = np.random.default_rng(1)
x = 0.5 * np.exp(2j * np.pi * 100e3 * t) + 0.002 * (rng.normal(size=n) + 1j * rng.normal(size=n))
for bits, dt, full in ((16, '<i2', 32768.0), (24, '<i4', float(1 << 23))):
    h = struct.pack('<IQQII', int(fs), 100_000_000, 1_700_000_000_000, bits, 0)
    h += struct.pack('<I', zlib.crc32(h))
    iq = np.empty(2 * n); iq[0::2] = x.real; iq[1::2] = x.imag
    body = np.round(iq * full).astype(dt).tobytes()
    open(f'rec{bits}.sdriq', 'wb').write(h + body)
    open(f'rec{bits}.bin', 'wb').write(h + body)
    if bits == 16: open('damaged.sdriq', 'wb').write(h[:28] + bytes(4) + body)
PY
ls -l rec16.sdriq rec24.sdriq | awk '{print $5, $NF}'
bad=""
for f in rec16.sdriq rec24.sdriq rec24.bin; do
  "$RXN" analyze "$f" > out.txt 2>&1; rc=$?
  echo "$f: rc=$rc $(grep -m1 -oE 'error: .{0,200}|peaks.{0,40}' out.txt | tr -s ' ') $(grep -m1 -oE 'centre .*' out.txt)"
  panics out.txt && { echo "broken: a panic ($f)"; exit 0; }
  if [ "$rc" != 0 ]; then bad="$bad $f not read (rc=$rc);"
  elif ! grep -qE 'peaks +100\.100000 MHz +-6\.0 dBFS' out.txt || ! grep -qE 'centre +100\.000000 MHz' out.txt \
      || ! grep -qE 'samples +65536 at 2\.000 MS/s' out.txt; then bad="$bad $f misread;"; fi
done
"$RXN" analyze damaged.sdriq > d.txt 2>&1; rd=$?
echo "damaged.sdriq: rc=$rd $(grep -m1 -oE 'error: .{0,200}' d.txt)"
{ [ "$rd" = 2 ] && grep -q "CRC-32 (bytes 28..32) is 0x00000000" d.txt; } || bad="$bad a damaged header not named (rc=$rd);"
[ -n "$bad" ] && { echo "broken: an SDRangel .sdriq recording is not read from its header:$bad"; exit 0; }; echo held; exit 1
