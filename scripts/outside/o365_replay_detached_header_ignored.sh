#!/bin/bash
# o365: rxsim's replay= of a raw file whose GNU Radio File Meta Sink headers lie beside it (FILE.hdr, detached:
# cf32, 1 MS/s, rx_freq 433.92 MHz, the bytes GNU Radio 3.10 wrote) ignored them and took replay_rate=2e6 and
# replay_freq=100e6: the +100 kHz tone played at 100.2 MHz, while `rxnode analyze` reads the file at 434.02 MHz.
# Expected (docs/hardware.md#replaying-a-recording-as-a-radio): refused when the radio is made, naming the .hdr, as
# attached headers are; the same samples without a .hdr still replay. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o365.XXXXXX); cd "$L"; export XDG_CACHE_HOME=$L/cache
python3 - <<'PY'
import numpy as np
h = bytes.fromhex("0907020004737472740b00000000000000ab090702000562797465730b00000000000c3500090702000463706c780009"
  "07020004747970650300000005090702000473697a650300000008090702000772785f74696d650c000000020b000000"
  "0000000000040000000000000000090702000772785f7261746504412e848000000000090702000776657273696f6e03"
  "0000000006090702000772785f667265710441b9dd180000000006")
n = 100000; t = np.arange(n) / 1e6; rng = np.random.default_rng(1)
x = 0.5 * np.exp(2j * np.pi * 100e3 * t) + 0.002 * (rng.normal(size=n) + 1j * rng.normal(size=n))
x.astype(np.complex64).tofile('rec.cfile'); x.astype(np.complex64).tofile('bare.cfile')
open('rec.cfile.hdr', 'wb').write(h)
PY
"$RXN" analyze rec.cfile > a.txt 2>&1
echo "analyze rec.cfile: $(grep -E 'samples|centre  |peaks' a.txt | tr -s ' ' | tr '\n' '|')"
run() { "$RXN" --sim capture -d "driver=rxsim,serial=$1,replay=$L/$1.cfile,replay_format=cf32,replay_rate=2e6,replay_freq=100e6" -f 100M -r 2M -t 0.1 > "c.$1.txt" 2>&1; echo $?; }
rr=$(run rec); rb=$(run bare)
for f in rec bare; do echo "replay $f: $(grep -oE 'rxsim: replay.{0,220}|peaks.{0,40}' c.$f.txt | tr -s ' ' | tr '\n' ' ' | cut -c1-260)"; done
panics a.txt c.*.txt && { echo "broken: a panic"; exit 0; }
grep -qE 'peaks +434\.020000 MHz' a.txt || { echo "broken: analyze no longer reads the header (434.02 MHz)"; exit 0; }
grep -qE 'peaks +100\.200000 MHz' c.bare.txt || { echo "broken: the samples without a .hdr no longer replay (rc=$rb)"; exit 0; }
grep -q 'rec.cfile.hdr beside it is its GNU Radio File Meta Sink header' c.rec.txt \
  || { echo "broken: a replay ignored the detached header rec.cfile.hdr (1 MS/s, 433.92 MHz): $(grep -m1 -oE 'peaks +[0-9.]+ MHz' c.rec.txt | tr -s ' ') at replay_rate=2e6, replay_freq=100e6, rc=$rr; analyze: $(grep -m1 -oE 'peaks +[0-9.]+ MHz' a.txt | tr -s ' ')"; exit 0; }
echo held; exit 1
