#!/bin/bash
# o280: the watcher on a terminal in non-canonical mode (`stty -icanon`, as a crashed full-screen
# program leaves it), where one read(2) takes every line typed so far. The operator types `x` and,
# in the same breath, `A` — both before the re-prompt after "unknown answer" is drawn. docs/safety.md
# (typed-ahead input): an answer counts only if typed after its prompt was fully drawn, so the `A`
# must be discarded by the re-prompt. Here the `A` was kept in the process's stdin buffer, where the
# re-prompt's tcflush cannot reach, and approved the task. Evidence: the ledger's `approved` lines.
source "$(dirname "$0")/lib.sh"
newlab o280; policy
{ hdr RAWTERM YES YES NO; plan '{"op":"rx_capture","device":"driver=rxsim","frequency_hz":100e6,"sample_rate_hz":2e6,"gain_db":20,"duration_s":0.2}'; } | post
python3 - "$RXN" "$L/rx" > $L/screen.txt <<'PY'
import os, select, subprocess, sys, termios, time
m, s = os.openpty(); t = termios.tcgetattr(s)
t[3] &= ~termios.ICANON; t[6][termios.VMIN] = 1; t[6][termios.VTIME] = 0
termios.tcsetattr(s, termios.TCSANOW, t)
p = subprocess.Popen([sys.argv[1], '--repo', sys.argv[2], 'watch', '--once', '--interval', '0.2'],
                     stdin=s, stdout=s, stderr=s, start_new_session=True)
os.close(s); out = b''; typed = None; t0 = time.time()
while time.time() - t0 < 8:
    if select.select([m], [], [], 0.05)[0]:
        try: d = os.read(m, 4096)
        except OSError: break
        if not d: break
        out += d
    if typed is None and out.rstrip().endswith(b'>'):
        time.sleep(0.3); os.write(m, b'x\nA\n'); typed = time.time()
    if typed and time.time() - typed > 2: break
p.terminate(); p.wait(); sys.stdout.write(out.decode('utf-8', 'replace'))
PY
grep -E 'unknown answer|^> |approved' $L/screen.txt | cut -c1-100
n=$(grep -c '"approved"' $L/rx/.local/rx_agent_ledger.jsonl || true)
echo "typed in one go before the re-prompt: 'x' then 'A'; ledger approved lines for RAWTERM: $n"
[ "$n" -gt 0 ] && { echo "broken: an A typed before the re-prompt was drawn approved RAWTERM on a non-canonical terminal ($n approved line)"; exit 0; }
echo held; exit 1
