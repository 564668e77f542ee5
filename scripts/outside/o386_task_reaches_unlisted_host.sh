#!/usr/bin/env bash
# A hostile branch posts a receive-only (YELLOW) task whose device args name a SoapyRemote
# server of the attacker's (`remote=tcp://HOST:PORT`); the node's policy lists no server.
# Before: the approval prompt called the step "within policy" and `run` connected to the
# attacker's host. Held: the step is BLOCKED by the node's policy, the host is never reached.
source "$(dirname "$0")/lib.sh"
newlab reach
SoapySDRUtil --info 2>/dev/null | grep -q remoteSupport || { echo "cannot play: SoapyRemote (libremoteSupport) is not installed"; exit 2; }
# The attacker's "server": a TCP listener on loopback that records every connection.
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 - "$PORT" "$L/hits" <<'PY' & LP=$!
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(16)
while True:
    c, a = s.accept(); open(sys.argv[2], "a").write("connection from %s:%d\n" % a); c.close()
PY
trap 'kill $LP 2>/dev/null' EXIT
sleep 0.3; : > "$L/hits"
policy
DEV="driver=remote,remote=tcp://127.0.0.1:$PORT,remote:driver=rxsim"
{ hdr REACH_1 YES YES NO; plan "{\"op\":\"rx_capture\",\"device\":\"$DEV\",\"frequency_hz\":100e6,\"sample_rate_hz\":2e6,\"gain_db\":20,\"duration_s\":0.2}"; } | post
approve
echo "--- the prompt's verdict on the step:"; grep -aE 'within policy|BLOCKED|REFUSED' "$L/watch.out" | head -3
timeout 60 "$RXN" --repo "$L/rx" run REACH_1 > "$L/run.out" 2>&1; rc=$?
echo "--- run REACH_1: exit $rc"; grep -aiE 'step 1|blocked|remote' "$L/run.out" | head -4
sleep 0.3
n=$(wc -l < "$L/hits")
echo "--- connections the attacker's host received: $n"; head -3 "$L/hits"
panics "$L/run.out" "$L/watch.out" && { echo "broken: a panic"; exit 0; }
[ "$n" -gt 0 ] && { echo "broken: a receive-only task made the node connect to a host its policy does not list ($n connection(s) to 127.0.0.1:$PORT)"; exit 0; }
grep -aq 'rx.allowed_remote_servers' "$L/run.out" "$L/watch.out" || { echo "broken: the host was not reached, but nothing names rx.allowed_remote_servers"; exit 0; }
echo held; exit 1
