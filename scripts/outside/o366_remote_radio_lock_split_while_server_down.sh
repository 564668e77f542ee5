#!/bin/bash
# o366: one radio reached two ways on one machine, as in o360 — a `capture` on it directly
# (`driver=rxsim,serial=X`) and an authorized RED tone through the SoapySDRServer on this machine
# (`driver=remote,remote=tcp://127.0.0.1:P,remote:driver=rxsim,serial=X`, the server listed in
# tx.allowed_remote_servers) — but the server's port does not answer while `run` names the radio it locks,
# and answers again a moment later, when the TX guard opens the radio (a server restarted by its service
# manager). docs/operator.md (one process per radio): a run never keys a radio another rxnode is receiving
# on. With the server down the lock was named after the args, server included (`driver=remote,remote=…`),
# not after the radio, so it was not the capture's lock and the tone was keyed in the middle of the
# reception. Here the port is a small TCP relay to the real server that starts listening only once `run`
# holds its radio lock. The radio's own log (rxsim, written by the capture's process and by the server's)
# is the witness. Needs SoapySDRServer and avahi-daemon (scripts/remote-services.sh starts it; root).
source "$(dirname "$0")/lib.sh"
newlab o366
soapy_server || exit 2
export RXNODE_RADIO_LOCK_DIR=$L/locks; mkdir -p $L/locks
U=o366-$$; LOCAL="driver=rxsim,serial=$U"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
URL=tcp://127.0.0.1:$PORT; REMOTE="driver=remote,remote=$URL,remote:driver=rxsim,serial=$U"
# The relay: nothing listens on PORT until a radio lock of this run is held (its holder file names the
# run), then every connection to PORT is carried to the real server.
python3 - "$PORT" "${SERVER#tcp://}" "$L/locks/rxnode/radio-locks" > $L/relay.out 2>&1 <<'PY' &
import os, socket, sys, threading, time
port, target, locks = int(sys.argv[1]), sys.argv[2], sys.argv[3]
host, tport = target.rsplit(":", 1)
t0 = time.time()
while time.time() - t0 < 60:
    try:
        if any(n.endswith(".json") and "VIA" in open(os.path.join(locks, n)).read() for n in os.listdir(locks)):
            break
    except OSError:
        pass
    time.sleep(0.001)
ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); ls.bind(("127.0.0.1", port)); ls.listen(16)
print("relay listening %.3f s after start" % (time.time() - t0), flush=True)
def pump(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d: break
            b.sendall(d)
    except OSError: pass
    for s in (a, b):
        try: s.shutdown(socket.SHUT_RDWR)
        except OSError: pass
while True:
    c, _ = ls.accept(); u = socket.create_connection((host, int(tport)))
    threading.Thread(target=pump, args=(c, u), daemon=True).start(); threading.Thread(target=pump, args=(u, c), daemon=True).start()
PY
RP=$!; trap 'kill $SP $RP 2>/dev/null' EXIT
policy '{"rx":{"max_duration_s":10,"max_gain_db":50},"tx":{"allowed_ranges_hz":[[433.05e6,434.79e6]],"max_gain_db":10,"max_duration_s":2,"allowed_remote_servers":["'$URL'"]}}'
{ hdr VIA YES NO YES; plan '{"op":"tx_tone","device":"'$REMOTE'","frequency_hz":433.92e6,"sample_rate_hz":1e6,"tone_offset_hz":5e4,"gain_db":0,"duration_s":0.3}'; } | post; approve
( "$RXN" --repo $L/rx --sim capture --device "$LOCAL" --frequency-hz 100e6 --sample-rate-hz 2e6 --gain-db 20 --duration-s 6 > $L/cap.out 2>&1 ) &
CP=$!
for i in $(seq 500); do grep -q ' activateStream RX' $RXSIM_EVENT_LOG && break; sleep 0.01; done
echo 'AUTHORIZE RF TX' | "$RXN" --repo $L/rx run VIA > $L/run.out 2>&1; echo "run rc=$?: $(grep -m1 -E '^  (PASS|BLOCKED|FAIL|NOT RUN)' $L/run.out | cut -c1-220)"
wait $CP; cat $L/relay.out
grep -E 'make|activateStream|deactivateStream|exitWhileActive' $RXSIM_EVENT_LOG | cut -c1-80
grep -q ' activateStream RX' $RXSIM_EVENT_LOG || { echo "cannot play: the capture never received: $(tail -2 $L/cap.out)"; exit 2; }
inside=$(awk '/ activateStream RX/{a=$1} / (deactivateStream|exitWhileActive) RX/{d=$1} / activateStream TX/{t=$1} END{print (t!="" && t>a && (d=="" || t<d)) ? 1 : 0}' $RXSIM_EVENT_LOG)
[ "$inside" = 1 ] && { echo "broken: the tone was keyed on $U through a SoapySDRServer that did not answer when run locked the radio, while another rxnode was receiving on it directly"; exit 0; }
[ "$(txlines)" = 0 ] || { echo "cannot play: a tone was keyed, but not inside the reception"; exit 2; }
grep -qE 'BLOCKED' $L/run.out || { echo "cannot play: the run neither keyed nor blocked: $(tail -3 $L/run.out)"; exit 2; }
echo held; exit 1
