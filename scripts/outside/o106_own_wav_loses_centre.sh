#!/bin/bash
# o106: rxnode's own WAV recording lost its centre frequency: `capture -f 100M --record r.wav` wrote no `auxi` chunk
# (the one SDR#, HDSDR and SDRuno write and rxnode's reader understands), so `rxnode analyze r.wav` said "centre
# unknown" about a file rxnode itself recorded at 100 MHz. Expected: the WAV carries SpectraVue's auxi chunk before its
# data (start time, CenterFreq 100000000, the rate), analyze reads the centre back, and the file stays a WAV a plain
# chunk walk reads (RIFF size = file size - 8, every sample in the data chunk).
source "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o106.XXXXXX); cd "$L"
"$RXN" --sim capture -d driver=rxsim -f 100M -r 2M -t 0.2 --record r.wav > c.txt 2>&1; echo "capture rc=$?: $(grep -E 'status|files' c.txt | tr -s ' ' | tr '\n' ' ')"
"$RXN" analyze r.wav > a.txt 2>&1; echo "analyze rc=$?: $(grep -E 'centre|error' a.txt | tr -s ' ' | tr '\n' ' ')"
python3 - > w.txt 2>&1 <<'PY'
import struct, numpy as np
b = open('r.wav', 'rb').read(); i = 12; chunks = []
print('RIFF size', struct.unpack('<I', b[4:8])[0], 'file size - 8', len(b) - 8)
while i + 8 <= len(b):
    k, n = b[i:i+4], struct.unpack('<I', b[i+4:i+8])[0]; chunks.append(k.decode())
    if k == b'auxi': print('auxi start', struct.unpack('<8H', b[i+8:i+24]), 'CenterFreq', struct.unpack('<I', b[i+40:i+44])[0])
    if k == b'data': x = np.frombuffer(b[i+8:i+8+n], '<f4'); print('data samples', len(x) // 2)
    i += 8 + n + (n & 1)
print('chunks', ' '.join(chunks))
PY
cat w.txt
panics c.txt a.txt && { echo "broken: a panic"; exit 0; }
grep -q 'status: PASS' c.txt || { echo "broken: the capture itself failed"; exit 0; }
grep -q 'centre *100.000000 MHz' a.txt || { echo "broken: rxnode's own WAV recording at 100 MHz reads back as '$(grep centre a.txt | head -1 | tr -s " ")'"; exit 0; }
grep -q 'CenterFreq 100000000' w.txt || { echo "broken: no auxi chunk with CenterFreq 100000000 in the WAV"; exit 0; }
grep -q 'chunks fmt  auxi data$' w.txt || { echo "broken: the chunks are not fmt, auxi, data: $(grep chunks w.txt)"; exit 0; }
sz=$(awk '/RIFF size/{print ($3==$8)}' w.txt); [ "$sz" = 1 ] || { echo "broken: the RIFF size does not match the file"; exit 0; }
grep -q 'data samples 400000' w.txt || { echo "broken: the data chunk does not hold the 400000 samples"; exit 0; }
echo held; exit 1
