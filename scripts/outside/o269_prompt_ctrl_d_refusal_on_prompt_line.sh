#!/bin/bash
# o269: a careless operator presses Ctrl-D, or Ctrl-C, at `publish P1`'s `PUBLISH P1` prompt on a real terminal
# (a python pty). The terminal echoes no line end, and the refusal was written straight after the prompt:
# `Type exactly `PUBLISH P1` to go ahead: ^Crxnode: error: refused: interrupted at the prompt …`, one run-on line.
# Expected: the prompt's line is ended first; the refusal starts a line of its own (exit 3, nothing published).
# Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab o269; policy; rxn node set-name LAB1 >/dev/null
{ hdr P1 YES YES NO; plan '{"op":"rx_capture","device":"driver=rxsim","frequency_hz":100e6,"sample_rate_hz":2e6,"gain_db":20,"duration_s":0.2}'; } | post; approve
rxn --sim run P1 >/dev/null 2>&1
bad=""
for key in eof int; do
  python3 - "$key" "$RXN" --repo "$L/rx" publish P1 > $L/pty.$key 2>&1 <<'PY'
import os, pty, select, signal, sys, time
key, argv = sys.argv[1], sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(argv[0], argv)
out, sent, t = b'', False, time.time()
while time.time() - t < 30:
    if select.select([fd], [], [], 0.1)[0]:
        try:
            d = os.read(fd, 4096)
        except OSError:
            break
        if not d:
            break
        out += d
    if not sent and b'to go ahead: ' in out:
        time.sleep(0.5)  # past the prompt's discard of input typed before it
        if key == 'eof':
            os.write(fd, b'\x04')
        else:
            os.kill(pid, signal.SIGINT)
        sent = True
_, st = os.waitpid(pid, 0)
tail = out.decode('utf-8', 'replace').split('Type exactly', 1)[-1]
print('exit %d; screen after the prompt: %r' % (os.waitstatus_to_exitcode(st), 'Type exactly' + tail[:160]))
PY
  echo "$key: $(cat $L/pty.$key)"
  grep -q '^exit 3;' $L/pty.$key || bad="$bad $key: not refused (exit 3);"
  grep -q "go ahead: \(^C\)\?rxnode" $L/pty.$key && bad="$bad $key: the refusal is glued to the prompt;"
done
git -C "$L/rx" rev-parse -q --verify refs/heads/rx-node >/dev/null && bad="$bad a commit was made;"
panics $L/pty.* && { echo "broken: panic"; exit 0; }
[ -n "$bad" ] && { echo "broken: Ctrl-D / Ctrl-C at the PUBLISH prompt:$bad"; exit 0; }
echo held; exit 1
