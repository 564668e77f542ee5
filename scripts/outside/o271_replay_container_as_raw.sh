#!/bin/bash
# o271: rxsim's replay= of another tool's recording that is no raw file, given replay_format as for a raw one. The
# container's headers were streamed as samples and shifted every sample after them: a float32 IQ WAV (its 44-byte
# header) replayed with replay_format=cf32 swapped I and Q, its +100 kHz tone captured at 99.900 MHz, PASS; a GNU Radio
# File Meta Sink recording (a header before each segment) saturated (43 % "clipped"); a .sigmf archive (tar headers and
# the meta's JSON before the samples) gave a phantom carrier beside the centre. `rxnode analyze` reads all three right.
# Expected (docs/hardware.md#replaying-a-recording-as-a-radio): each refused when the radio is made, naming what the
# file is; the same samples as a raw .cf32 still replay at 100.100 MHz. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
GR="$(cd "$(dirname "$0")/../.." && pwd)/tests/support/gr_check.py"   # GNU Radio's own blocks write the meta file
L=$(mktemp -d /tmp/o271.XXXXXX); cd "$L"; export XDG_CACHE_HOME=$L/cache
/usr/bin/python3 "$GR" meta "$L/gr.cfile" 1e6 100e3 300000 float 0 100e6 > w.txt 2>&1 \
  || { echo "broken: GNU Radio's File Meta Sink did not run (gnuradio for /usr/bin/python3): $(tail -n 1 w.txt)"; exit 0; }
python3 - <<'PY'
import numpy as np, struct, tarfile, json
N = 1 << 18; t = np.arange(N); fs = 1000000
x = (0.1 * np.exp(2j * np.pi * 0.1 * t) + (np.random.default_rng(1).standard_normal((N, 2)) @ [1, 1j]) * 3e-4).astype(np.complex64)
x.tofile('tone.cf32')
fmt = struct.pack('<HHIIHH', 3, 2, fs, fs * 8, 8, 32)   # WAVE_FORMAT_IEEE_FLOAT, 2 channels (I, Q), 32 bits
body = b'WAVE' + b'fmt ' + struct.pack('<I', 16) + fmt + b'data' + struct.pack('<I', 8 * N) + x.tobytes()
open('tone.wav', 'wb').write(b'RIFF' + struct.pack('<I', len(body)) + body)
json.dump({"global": {"core:datatype": "cf32_le", "core:sample_rate": fs, "core:version": "1.2.0"},
           "captures": [{"core:sample_start": 0, "core:frequency": 100e6}], "annotations": []}, open('tone.sigmf-meta', 'w'))
x.tofile('tone.sigmf-data')
with tarfile.open('tone.sigmf', 'w', format=tarfile.USTAR_FORMAT) as a:   # as sigmf's archive writes it
    a.add('tone.sigmf-meta', 'tone/tone.sigmf-meta'); a.add('tone.sigmf-data', 'tone/tone.sigmf-data')
PY
for f in tone.wav gr.cfile tone.sigmf tone.cf32; do
  "$RXN" analyze "$f" -r 1M -f 100M > "a.$f.txt" 2>&1
  "$RXN" --sim capture -d "driver=rxsim,serial=$f,replay=$L/$f,replay_format=cf32,replay_rate=1e6,replay_freq=100e6" \
    -f 100M -r 1M -t 0.2 > "c.$f.txt" 2>&1; echo "$f rc=$?"
  echo "  analyze: $(grep -E '^peaks|error' "a.$f.txt" | tr -s ' ' | head -1 | cut -c1-120)"
  echo "  replay:  $(grep -oE 'rxsim: replay.*|peaks.*|status.*' "c.$f.txt" | tr -s ' ' | tr '\n' ' ' | cut -c1-300)"
done
panics a.*.txt c.*.txt && { echo "broken: a panic"; exit 0; }
grep -q '^peaks *100.100000 MHz' a.tone.wav.txt || { echo "broken: analyze did not read the WAV's tone: $(grep -E 'peaks|error' a.tone.wav.txt)"; exit 0; }
grep -qE 'peaks +100.100000 MHz' c.tone.cf32.txt || { echo "broken: the raw .cf32 no longer replays its tone: $(grep -E 'peaks|error' c.tone.cf32.txt | head -2)"; exit 0; }
bad=""
for f in tone.wav:WAV gr.cfile:'GNU Radio File Meta Sink' tone.sigmf:'tar archive'; do
  n=${f%%:*} w=${f#*:}
  grep -q "it is a $w" "c.$n.txt" || bad="$bad $n replayed ($(grep -E 'peaks|status' "c.$n.txt" | tr -s ' ' | tr '\n' ' ' | cut -c1-90));"
done
[ -n "$bad" ] && { echo "broken: a container replayed as raw samples, its headers as samples:$bad"; exit 0; }; echo held; exit 1
