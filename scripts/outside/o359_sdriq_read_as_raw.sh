#!/bin/bash
# o359: an SDRangel .sdriq recording (32-byte header: rate, centre, start time, sample size 16|24, filler, CRC-32;
# then I/Q int16, or int32 holding 24-bit values at full scale 2^23) was not told apart from raw samples:
# `analyze x.sdriq` said only `unsupported IQ format: "sdriq"`, and `--format cs32` on a 24-bit one read its header
# as samples and its -6 dBFS tone as -54 dBFS, exit 0.
# Expected (docs/operator.md#analysing-a-recording): told by its header's CRC, whatever its name or --format, and
# either read from its header (its -6 dBFS tone at 100.1 MHz: o363) or refused naming SDRangel and what the header
# says (rate, centre, sample size), never its header read as samples. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o359.XXXXXX); cd "$L"; export XDG_CACHE_HOME=$L/cache
python3 - <<'PY'
import struct, zlib, numpy as np
fs = 2e6; n = 1 << 16; t = np.arange(n) / fs; rng = np.random.default_rng(1)
x = 0.5 * np.exp(2j * np.pi * 100e3 * t) + 0.002 * (rng.normal(size=n) + 1j * rng.normal(size=n))
for bits, dt, full in ((16, '<i2', 32768.0), (24, '<i4', float(1 << 23))):
    h = struct.pack('<IQQII', int(fs), 100_000_000, 1_700_000_000_000, bits, 0)
    h += struct.pack('<I', zlib.crc32(h))
    iq = np.empty(2 * n); iq[0::2] = x.real; iq[1::2] = x.imag
    open(f'rec{bits}.sdriq', 'wb').write(h + np.round(iq * full).astype(dt).tobytes())
PY
ls -l rec16.sdriq rec24.sdriq | awk '{print $5, $NF}'
bad=""
for f in rec16 rec24; do
  for fmt in "" cs32 cs16; do
    tag="$f${fmt:+ --format $fmt}"
    if [ -z "$fmt" ]; then "$RXN" analyze "$f.sdriq" > out.txt 2>&1; else "$RXN" analyze --format $fmt -r 2M -f 100M "$f.sdriq" > out.txt 2>&1; fi
    rc=$?
    echo "$tag: rc=$rc $(grep -m1 -oE 'error: .{0,220}|peaks.{0,40}' out.txt | tr -s ' ')"
    panics out.txt && { echo "broken: a panic ($tag)"; exit 0; }
    [ "$rc" = 0 ] && ! grep -qE 'peaks +100\.100000 MHz +-6\.0 dBFS' out.txt && bad="$bad $tag read as raw, exit 0 ($(grep -m1 -oE 'peaks +[0-9.]+ MHz +-?[0-9.]+ dBFS' out.txt | tr -s ' '));"
    [ "$rc" != 0 ] && ! grep -qE "an SDRangel \.sdriq recording .*2000000 S/s, centre 100000000 Hz, ${f#rec}-bit" out.txt && bad="$bad $tag refused without naming what it is;"
  done
done
[ -n "$bad" ] && { echo "broken: an SDRangel .sdriq recording is not told apart from raw samples:$bad"; exit 0; }; echo held; exit 1
