#!/bin/bash
# o108: wrong words: a capture interrupted by Ctrl-C (SIGINT 1.5 s into a paced 5 s rxsim capture) that lost no sample
# was reported "loss 0 overflow(s), 0 dropped, 0 timeout(s) — NOT clean": the loss line called it lossy while every
# loss count it printed was 0. Expected: the loss line says nothing was lost and what happened (interrupted after N of
# M samples); "NOT clean" stays for a real loss.
source "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o108.XXXXXX); cd "$L"
timeout -s INT 1.5 "$RXN" --sim capture -d driver=rxsim,pace=1 -f 100M -r 2M -t 5 > c.txt 2>&1; rc=$?
echo "capture interrupted at 1.5 s: rc=$rc"; grep -E 'samples|loss|status' c.txt
panics c.txt && { echo "broken: a panic"; exit 0; }
grep -q 'samples .*(cancelled)' c.txt || { echo "broken: the capture was not interrupted as planned (no '(cancelled)')"; exit 0; }
n=$(sed -n 's/.*samples *\([0-9]*\) of 10000000 received.*/\1/p' c.txt)
grep -q 'loss .*0 overflow(s), 0 dropped, 0 timeout(s)' c.txt || { echo "broken: not the lossless interrupted case: $(grep loss c.txt)"; exit 0; }
grep -q 'loss .*NOT clean' c.txt && { echo "broken: a capture that lost nothing is called 'NOT clean' ($(grep loss c.txt | tr -s ' '))"; exit 0; }
grep -q "interrupted after $n of 10000000 samples" c.txt || { echo "broken: the loss line does not say it was interrupted after $n of 10000000 samples"; exit 0; }
echo held; exit 1
