#!/bin/bash
# o122: a confident wrong number from another tool's file. GNU Radio records with metadata through its File Meta
# Sink: a header (a serialized PMT dictionary: strt, bytes, type, size, cplx, rx_rate, …, then extras such as rx_freq)
# before every segment of samples, or all of them in FILE.hdr beside the samples. `rxnode analyze` read the attached
# headers as samples: an int16 recording of 300 000 samples was 300 171, each segment shifted by a header's 171 bytes;
# the tone at 434.170 MHz came out as 4 "carriers", the strongest at 433.670 MHz, exit 0; a detached .hdr was ignored
# and any -r taken. Expected: the headers skipped, the layout, rate and centre taken from them, a contradicting -r
# refused naming the header.
. "$(dirname "$0")/lib.sh"
GR="$(cd "$(dirname "$0")/../.." && pwd)/tests/support/gr_check.py"   # GNU Radio's own blocks write the files
L=$(mktemp -d /tmp/o122.XXXXXX); cd "$L"
/usr/bin/python3 "$GR" meta "$L/att16.cs16" 2e6 250e3 300000 short 0 433.92e6 > w1.txt 2>&1 \
  && /usr/bin/python3 "$GR" meta "$L/det.cfile" 2e6 250e3 300000 float 1 433.92e6 > w2.txt 2>&1 \
  || { echo "broken: GNU Radio's File Meta Sink did not run (gnuradio for /usr/bin/python3): $(cat w1.txt w2.txt | tail -n 1)"; exit 0; }
echo "GNU Radio wrote att16.cs16 ($(stat -c %s att16.cs16) bytes, headers attached), det.cfile + det.cfile.hdr"
"$RXN" analyze att16.cs16 -r 2M -f 433.92M > a.txt 2>&1; ra=$?
echo "analyze att16.cs16 -r 2M -f 433.92M: rc=$ra: $(grep -E 'samples|mean|peaks|^ {10,}[0-9]|error' a.txt | tr -s ' ' | tr '\n' ' ' | cut -c1-300)"
"$RXN" analyze det.cfile -r 2.4M > b.txt 2>&1; rb=$?
echo "analyze det.cfile -r 2.4M: rc=$rb: $(grep -E 'samples|peaks|error' b.txt | tr -s ' ' | tr '\n' ' ' | cut -c1-240)"
panics a.txt b.txt && { echo "broken: a panic"; exit 0; }
[ $ra -ne 0 ] && { echo "broken: a File Meta Sink recording is not read: $(head -c 200 a.txt)"; exit 0; }
grep -q 'samples *300000 at 2.000 MS/s' a.txt || { echo "broken: the headers were read as samples: $(grep samples a.txt | tr -s ' ')"; exit 0; }
n=$(sed -n '/^peaks/,/^clock/p' a.txt | grep -c 'MHz')
grep -q '^peaks *434.170000 MHz' a.txt && [ "$n" -eq 1 ] || { echo "broken: the tone is not where GNU Radio put it, alone: $(sed -n '/^peaks/,/^clock/p' a.txt | tr -s ' ' | tr '\n' ' ')"; exit 0; }
[ $rb -eq 0 ] && { echo "broken: a rate contradicting the detached header was used: $(grep peaks b.txt | tr -s ' ')"; exit 0; }
grep -q 'GNU Radio File Meta Sink header' b.txt || { echo "broken: the contradicting rate was refused without naming the header: $(head -c 200 b.txt)"; exit 0; }
echo held; exit 1
