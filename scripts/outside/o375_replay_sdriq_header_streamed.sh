#!/bin/bash
# o375: rxsim's replay= of an SDRangel .sdriq recording given as a raw file (replay_format=ci16) streamed its
# 32-byte header (rate, centre, start time, sample size, CRC-32) as 8 samples, and the capture said PASS, while
# `rxnode analyze` refuses the file naming it.
# Expected (docs/hardware.md#replaying-a-recording-as-a-radio): refused when the radio is made, as the other
# containers are, naming SDRangel's .sdriq; the same samples without the header still replay. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o375.XXXXXX); cd "$L"; export XDG_CACHE_HOME=$L/cache
python3 - <<'PY'
import struct, zlib, numpy as np
fs = 2e6; n = 1 << 18; t = np.arange(n) / fs; rng = np.random.default_rng(1)
x = 0.3 * np.exp(2j * np.pi * 100e3 * t) + 0.002 * (rng.normal(size=n) + 1j * rng.normal(size=n))
iq = np.empty(2 * n); iq[0::2] = x.real; iq[1::2] = x.imag
body = np.round(iq * 32767).astype('<i2').tobytes()
h = struct.pack('<IQQII', int(fs), 100_000_000, 1_700_000_000_000, 16, 0); h += struct.pack('<I', zlib.crc32(h))
open('rec.sdriq', 'wb').write(h + body); open('rec.cs16', 'wb').write(body)
PY
run() { "$RXN" --sim capture -d "driver=rxsim,serial=$1,replay=$L/$2,replay_format=ci16,replay_rate=2e6,replay_freq=100e6" -f 100M -r 2M -t 0.1 > "c.$1.txt" 2>&1; echo $?; }
"$RXN" analyze rec.sdriq > a.txt 2>&1; ra=$?
echo "analyze rec.sdriq: rc=$ra $(grep -m1 -oE 'error: .{0,120}' a.txt)"
rs=$(run sdriq rec.sdriq); rr=$(run raw rec.cs16)
for f in sdriq raw; do echo "replay $f: $(grep -oE 'rxsim: replay.{0,200}|peaks.{0,40}|status.*' c.$f.txt | tr -s ' ' | tr '\n' ' ' | cut -c1-260)"; done
panics a.txt c.*.txt && { echo "broken: a panic"; exit 0; }
[ "$rr" = 0 ] && grep -qE 'peaks +100.100000 MHz' c.raw.txt || { echo "broken: the samples without the header no longer replay (rc=$rr)"; exit 0; }
[ "$rs" = 0 ] && { echo "broken: rxsim streamed the .sdriq header as samples, exit 0 ($(grep -m1 -oE 'status.*' c.sdriq.txt)); analyze rc=$ra"; exit 0; }
grep -q 'it is an SDRangel .sdriq recording' c.sdriq.txt || { echo "broken: the .sdriq refused without naming what it is"; exit 0; }
echo held; exit 1
