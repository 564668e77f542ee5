#!/bin/bash
# o15: unclear error: `clkin compare` with MASTER and SLAVE naming one radio by different args (same driver and serial,
# different extra keys) waits 3 s and then says the radio "is in use by another rxnode: PID <n>" — <n> is the very
# process that prints it (it locked the radio as MASTER). The same args twice get the right message ("MASTER and SLAVE
# are the same radio"). Expected that message here too, by the radio's identity (driver+serial). Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o15.XXXXXX); cd "$L"
"$RXN" --sim clkin compare -d driver=rxsim,serial=a,tone_hz=100100000 -d driver=rxsim,serial=a,tone_hz=100100000,ppm=3 \
  -f 100M -r 2M --tone-hz 100.1M -g 20 > out.txt 2>&1 & P=$!; wait $P; rc=$?
echo "rxnode pid $P, rc=$rc: $(tail -1 out.txt)"
grep -q "in use by another rxnode: PID $P " out.txt && { echo "broken: the command blames 'another rxnode' with its own PID for a radio named twice"; exit 0; }; echo held; exit 1
