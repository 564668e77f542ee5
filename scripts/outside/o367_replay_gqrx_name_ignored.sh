#!/bin/bash
# o367: rxsim's replay= of a gqrx raw recording (gqrx_20231010_120000_433920000_1000000_fc.raw: cf32, its name stating
# centre 433.92 MHz and 1 MS/s, as `rxnode analyze` reads it) took replay_rate=2e6 and replay_freq=100e6 instead: its
# +100 kHz tone played at 100.2 MHz, exit 0, while analyze puts it at 434.02 MHz.
# Expected (docs/hardware.md#replaying-a-recording-as-a-radio): the name's centre and rate are the replay's; a
# replay_rate or replay_freq that disagrees is refused naming the name's value. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o367.XXXXXX); cd "$L"; export XDG_CACHE_HOME=$L/cache
G=gqrx_20231010_120000_433920000_1000000_fc.raw
python3 - "$G" <<'PY'
import sys, numpy as np
n = 100000; t = np.arange(n) / 1e6; rng = np.random.default_rng(1)
x = 0.5 * np.exp(2j * np.pi * 100e3 * t) + 0.002 * (rng.normal(size=n) + 1j * rng.normal(size=n))
x.astype(np.complex64).tofile(sys.argv[1])
PY
"$RXN" analyze "$G" > a.txt 2>&1
echo "analyze: $(grep -E 'centre  |peaks' a.txt | tr -s ' ' | tr '\n' '|')"
run() { "$RXN" --sim capture -d "driver=rxsim,serial=q,replay=$L/$G$2" -f "$3" -r "$4" -t 0.1 > "c.$1.txt" 2>&1; echo $?; }
rw=$(run wrong ",replay_format=cf32,replay_rate=2e6,replay_freq=100e6" 100M 2M); rn=$(run named "" 433.92M 1M)
for f in wrong named; do echo "replay $f: $(grep -oE 'rxsim: replay.{0,200}|peaks.{0,40}' c.$f.txt | tr -s ' ' | tr '\n' ' ' | cut -c1-240)"; done
panics a.txt c.*.txt && { echo "broken: a panic"; exit 0; }
grep -qE 'peaks +434\.020000 MHz' a.txt || { echo "broken: analyze no longer reads the name (434.02 MHz)"; exit 0; }
grep -q 'its gqrx file name states 1000000 S/s' c.wrong.txt \
  || { echo "broken: a replay ignored the gqrx name (433.92 MHz, 1 MS/s): $(grep -m1 -oE 'peaks +[0-9.]+ MHz' c.wrong.txt | tr -s ' ') at replay_rate=2e6, replay_freq=100e6, rc=$rw; analyze: $(grep -m1 -oE 'peaks +[0-9.]+ MHz' a.txt | tr -s ' ')"; exit 0; }
grep -qE 'peaks +434\.020000 MHz' c.named.txt || { echo "broken: without replay_rate/replay_freq the tone is not at 434.02 MHz (rc=$rn)"; exit 0; }
echo held; exit 1
