#!/bin/bash
# o23: lost data: `rxnode sweep --csv FILE` (or `--plot FILE`) whose file cannot be written (here a full file system,
# as a small SD card or a full /tmp gives) throws the measured sweep away: the radio swept the whole band (rxsim's log
# shows the stream), then only "cannot write s.csv: No space left on device" is printed, exit 1 — no peaks, no floor,
# no JSON on stdout, and no `sweep` ledger event although the radio was used. A repeated sweep (-i/-e) loses hours the
# same way. `capture --record R --plot P` and `analyze --plot P` whose picture cannot be written (its folder is a file)
# throw their report away too (the recording's size and SHA-256 with it; the error is the drawing library's
# `ImageError(IoError(Os { code: 20 … }))`). A capture whose recording fails keeps its report (PARTIAL, the error
# named). Expected: the measurement is reported (text or JSON) and the write failure named after it, exit non-zero.
# Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab o23; cd "$L"; mkdir full
if ! mount -t tmpfs -o size=16k tmpfs full 2>/dev/null; then
  echo "broken: cannot mount a small tmpfs to fill (run as root); nothing checked"; exit 0
fi
trap 'umount "$L/full" 2>/dev/null' EXIT
dd if=/dev/zero of=full/fill bs=1k count=16 2>/dev/null
rxn --sim --json sweep -d "driver=rxsim,serial=O23,settle_s=0.002,pace=0,emitters=95e6:-30" --start-hz 88M --stop-hz 108M \
  -B 10k --csv full/s.csv > out.json 2> err.txt; rc=$?
echo "rc=$rc stdout: $(wc -c < out.json) bytes; stderr: $(head -c 200 err.txt)"
echo "radio streamed: $(grep -c 'activateStream RX' "$RXSIM_EVENT_LOG") time(s); ledger sweep events: $(grep -c '"event":"sweep"' rx/.local/rx_agent_ledger.jsonl 2>/dev/null || echo 0)"
panics err.txt && { echo "broken: panic"; exit 0; }
python3 -c "import json,sys; v=json.load(open('out.json')); sys.exit(0 if v.get('peaks') and any(abs(p['frequency_hz']-95e6)<20e3 for p in v['peaks']) else 1)" 2>/dev/null \
  || { echo "broken: the swept band (its 95 MHz carrier, floor, JSON) is thrown away when --csv cannot be written (rc=$rc)"; exit 0; }
[ $rc -ne 0 ] && grep -q 'No space left' err.txt || { echo "broken: the CSV write failure is not named, or exit 0"; exit 0; }
echo x > notdir
rxn --sim --json capture -d "driver=rxsim,serial=O23c,pace=0" -f 100M -r 1M -t 0.2 --record kept.cf32 --plot notdir/x.png > cap.json 2> cap.err; rc=$?
echo "capture --plot notdir/x.png: rc=$rc stdout $(wc -c < cap.json) bytes; $(head -c 220 cap.err)"
[ -s cap.json ] || { echo "broken: a capture whose --plot cannot be written prints no report (its recording's hash is lost)"; exit 0; }
echo held; exit 1
