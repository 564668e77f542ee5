#!/bin/bash
# o121: a wrong number from another tool's file. gqrx names its raw I/Q recordings
# gqrx_YYYYMMDD_HHMMSS_FREQ_RATE_fc.raw (complex float32): the name is the recording's only metadata, its centre and
# rate. `rxnode analyze` ignored it: the file was refused until the format was given ("a .raw file does not say how
# its samples are stored"), and then any `-r` was taken — a recording made at 2 MS/s analysed with `-r 2.4M` put its
# 250 kHz tone at 434.220 MHz instead of 434.170 MHz, exit 0. Expected: read as cf32 with the name's centre and rate;
# a rate or centre that disagrees with the name refused naming it, as a WAV's header and auxi chunk are.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o121.XXXXXX); cd "$L"
G=gqrx_20240502_141200_433920000_2000000_fc.raw
python3 - "$G" <<'PY'
import numpy as np, sys
rng = np.random.default_rng(5); fs = 2e6; n = 400000; t = np.arange(n) / fs
x = 0.1 * np.exp(2j * np.pi * 250e3 * t) + 0.001 * (rng.standard_normal(n) + 1j * rng.standard_normal(n))
x.astype(np.complex64).tofile(sys.argv[1])   # as gqrx writes it: interleaved float32 I/Q
PY
"$RXN" analyze "$G" > a.txt 2>&1; rc=$?
echo "analyze $G: rc=$rc: $(grep -E 'samples|centre|peaks|error' a.txt | tr -s ' ' | tr '\n' ' ' | cut -c1-240)"
"$RXN" analyze "$G" -F cf32 -r 2.4M -f 433.92M > b.txt 2>&1; rb=$?
echo "analyze $G -F cf32 -r 2.4M -f 433.92M: rc=$rb: $(grep -E 'samples|peaks|error' b.txt | tr -s ' ' | tr '\n' ' ' | cut -c1-240)"
panics a.txt b.txt && { echo "broken: a panic"; exit 0; }
[ $rb -eq 0 ] && { echo "broken: a rate contradicting the gqrx name was used: $(grep peaks b.txt | tr -s ' ')"; exit 0; }
grep -q 'gqrx file name' b.txt || { echo "broken: the contradicting rate was refused without naming the gqrx name: $(head -c 200 b.txt)"; exit 0; }
[ $rc -ne 0 ] && { echo "broken: a gqrx recording is not read from its name: $(head -c 160 a.txt)"; exit 0; }
grep -q 'samples *400000 at 2.000 MS/s' a.txt && grep -q '434.170000 MHz' a.txt || { echo "broken: read, but not at the name's rate and centre"; exit 0; }
echo held; exit 1
