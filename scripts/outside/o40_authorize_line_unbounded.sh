#!/bin/bash
# o40: the answer to a prompt is read without a bound. `rxnode run` of a RED task with stdin from a stream
# that never ends a line (a careless `< /dev/zero`, a tool that writes without newlines) keeps reading into
# memory: 256 MiB of NULs piped to the AUTHORIZE prompt made it hold over 600 MB (it grew 1.5 GB/s from
# /dev/zero until the OOM killer). An answer longer than any phrase can never authorize: it must be refused
# after a few KiB, with the ledger's `refused` line, and key nothing.
source "$(dirname "$0")/lib.sh"
newlab o40; policy
TX='{"op":"tx_tone","device":"driver=rxsim,serial=tx","frequency_hz":433.92e6,"sample_rate_hz":2e6,"tone_offset_hz":5e4,"gain_db":0,"duration_s":0.3}'
{ hdr LONG1 YES NO YES; plan "$TX"; } | post; approve
python3 - "$RXN" "$L" > $L/measure <<'PY'
import resource, subprocess, sys
rxn, lab = sys.argv[1], sys.argv[2]
feed = subprocess.Popen(['head', '-c', str(256 << 20), '/dev/zero'], stdout=subprocess.PIPE)
out = open(lab + '/run.out', 'w')
rc = subprocess.call([rxn, '--repo', lab + '/rx', '--sim', 'run', 'LONG1'], stdin=feed.stdout, stdout=out, stderr=out, timeout=120)
feed.stdout.close(); feed.kill()
print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)
PY
read rc mb < $L/measure; tail -2 $L/run.out | cut -c1-200
echo "run rc=$rc, peak memory ${mb} MB, TX lines in the radio log: $(txlines), ledger: $(grep -o '"event":"refused"' $L/rx/.local/rx_agent_ledger.jsonl | head -1)"
[ "$mb" -gt 128 ] && { echo "broken: the AUTHORIZE answer is read without a bound (${mb} MB held for one line)"; exit 0; }
[ "$rc" -ne 3 ] || [ "$(txlines)" -ne 0 ] && { echo "broken: an overlong answer was not refused (rc=$rc)"; exit 0; }
echo held; exit 1
