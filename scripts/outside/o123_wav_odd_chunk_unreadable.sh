#!/bin/bash
# o123: another tool's WAV refused. RIFF pads a chunk of odd length with one byte, and a writer may put such a chunk
# (a LIST/INFO note of odd length, a vendor chunk) between `fmt ` and `data`. `rxnode analyze` refused the file:
# "not a readable WAV file: Failed to read enough bytes" (its WAV reader skipped the chunk but not its pad and read
# the next chunk header a byte off). Python's own `wave` module reads it. Expected: read as its twin without the chunk.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o123.XXXXXX); cd "$L"
python3 - <<'PY'
import numpy as np, struct, wave
fs = 250000; n = 250000; t = np.arange(n) / fs; rng = np.random.default_rng(2)
x = 0.25 * np.exp(2j * np.pi * 50e3 * t) + 0.01 * (rng.standard_normal(n) + 1j * rng.standard_normal(n))
iq = np.empty(2 * n); iq[0::2] = x.real; iq[1::2] = x.imag
def chunk(i, b): return i + struct.pack('<I', len(b)) + b + (b'\0' if len(b) % 2 else b'')
fmt = chunk(b'fmt ', struct.pack('<HHIIHH', 1, 2, fs, fs * 4, 4, 16))
data = chunk(b'data', np.round(iq * 32767).astype('<i2').tobytes())
note = chunk(b'LIST', b'INFOISFT' + struct.pack('<I', 5) + b'HDSDR')   # 17 bytes: one pad byte after it
for name, body in [('odd.wav', b'WAVE' + fmt + note + data), ('twin.wav', b'WAVE' + fmt + data)]:
    open(name, 'wb').write(b'RIFF' + struct.pack('<I', len(body)) + body)
w = wave.open('odd.wav'); print('python wave reads odd.wav:', w.getnchannels(), 'channels,', w.getnframes(), 'frames at', w.getframerate())
PY
"$RXN" analyze odd.wav > a.txt 2>&1; ra=$?; "$RXN" analyze twin.wav > b.txt 2>&1
echo "analyze odd.wav: rc=$ra: $(grep -E 'samples|peaks|error' a.txt | tr -s ' ' | tr '\n' ' ' | cut -c1-200)"
echo "analyze twin.wav: $(grep -E 'samples|peaks|error' b.txt | tr -s ' ' | tr '\n' ' ' | cut -c1-200)"
panics a.txt b.txt && { echo "broken: a panic"; exit 0; }
[ $ra -ne 0 ] && { echo "broken: a WAV with an odd-sized chunk before its samples is refused: $(head -c 160 a.txt)"; exit 0; }
[ "$(grep -E '^(samples|noise|mean|peaks)' a.txt)" = "$(grep -E '^(samples|noise|mean|peaks)' b.txt)" ] || { echo "broken: read, but not as its twin"; exit 0; }
echo held; exit 1
