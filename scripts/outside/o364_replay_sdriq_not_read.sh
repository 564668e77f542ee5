#!/bin/bash
# o364: rxsim's replay= of an SDRangel .sdriq recording was refused whatever was given: without replay_format it
# asked for replay_format, replay_rate and replay_freq; with them it refused the file as a container. A lab could
# not replay the recordings SDRangel makes, while `rxnode analyze` reads them.
# Expected (docs/hardware.md#replaying-a-recording-as-a-radio): replayed from its header (rate, centre, 16-bit or
# 24-bit in 32-bit words at full scale 2^23), its tone at 100.1 MHz at the level of the same samples as raw cf32;
# a replay_freq that disagrees with the header refused naming it. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o364.XXXXXX); cd "$L"; export XDG_CACHE_HOME=$L/cache
python3 - <<'PY'
import struct, zlib, numpy as np
fs = 2e6; n = 1 << 16; t = np.arange(n) / fs
x = 0.25 * np.exp(2j * np.pi * 100e3 * t)
iq = np.empty(2 * n); iq[0::2] = x.real; iq[1::2] = x.imag
iq.astype('<f4').tofile('tone.cf32')
for bits, dt, full in ((16, '<i2', 32767.0), (24, '<i4', float(1 << 23))):
    h = struct.pack('<IQQII', int(fs), 100_000_000, 1_700_000_000_000, bits, 0); h += struct.pack('<I', zlib.crc32(h))
    open(f'rec{bits}.sdriq', 'wb').write(h + np.round(iq * full).astype(dt).tobytes())
PY
run() { "$RXN" --sim capture -d "driver=rxsim,serial=$1,replay=$L/$2$3" -f 100M -r 2M -t 0.1 > "c.$1.txt" 2>&1; echo $?; }
rr=$(run raw tone.cf32 ",replay_format=cf32,replay_rate=2e6,replay_freq=100e6")
r16=$(run s16 rec16.sdriq ""); r24=$(run s24 rec24.sdriq ""); rf=$(run sf rec16.sdriq ",replay_freq=101e6")
for f in raw s16 s24 sf; do echo "replay $f: $(grep -oE 'rxsim: replay.{0,160}|peaks.{0,40}' c.$f.txt | tr -s ' ' | tr '\n' ' ' | cut -c1-220)"; done
panics c.*.txt && { echo "broken: a panic"; exit 0; }
lvl() { grep -m1 -oE 'peaks +100\.(09|10)[0-9]+ MHz +-?[0-9.]+' "c.$1.txt" | awk '{print $NF}'; }
want=$(lvl raw); [ -n "$want" ] || { echo "broken: the raw cf32 tone no longer replays (rc=$rr)"; exit 0; }
bad=""
for f in s16 s24; do got=$(lvl $f); [ "$got" = "$want" ] || bad="$bad $f: tone at ${got:-none} dBFS, raw $want (rc=$(eval echo \$r${f#s}));"; done
{ [ "$rf" != 0 ] && grep -q 'disagrees with' c.sf.txt; } || bad="$bad a disagreeing replay_freq not refused (rc=$rf);"
[ -n "$bad" ] && { echo "broken: an SDRangel .sdriq recording does not replay from its header:$bad"; exit 0; }; echo held; exit 1
