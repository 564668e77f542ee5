#!/bin/bash
# o50: the main PC pushes a branch `evil` holding one commit whose message is 300 MiB of 'A' (300 KiB on the wire); the
# operator's plain `git fetch` (or `git pull`) brings every branch, so the checkout holds it. libgit2's push reads every
# advertised commit it holds whole (to leave it out of the pack): each `publish --push` and each status heartbeat then
# inflated 300 MiB (publish peaked at 637 MB). Witness: /usr/bin/time's maximum resident size of the rxnode process.
. "$(dirname "$0")/lib.sh"
newlab pushbomb; published PB1
{ hdr PB2 YES YES NO; plan '{"op":"rx_capture","device":"driver=rxsim","frequency_hz":100e6,"sample_rate_hz":2e6,"gain_db":20,"duration_s":0.2}'; } | post; approve
rxn --sim run PB2 >/dev/null 2>&1
B=$(bomb_commit $L/origin.git video-development)
git -C $L/origin.git update-ref refs/heads/evil $B
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
setsid git daemon --reuseaddr --listen=127.0.0.1 --port=$PORT --base-path=$L --export-all --enable=receive-pack $L >/dev/null 2>&1 & DP=$!
for i in $(seq 100); do (echo > /dev/tcp/127.0.0.1/$PORT) 2>/dev/null && break; sleep 0.1; done
git -C $L/rx remote set-url origin git://127.0.0.1:$PORT/origin.git
git -C $L/rx fetch -q origin      # the operator's plain fetch brings every branch
echo "evil at $B ($(git -C $L/rx cat-file -s $B) bytes) is in the RX checkout"
/usr/bin/time -f '%M' -o $L/time "$RXN" --repo $L/rx publish PB2 --push <<< "PUBLISH PB2" > $L/p.out 2>&1; rc=$?
m1=$(( $(tail -1 $L/time) / 1024 )); echo "publish PB2 --push: rc=$rc, peak ${m1} MB: $(tail -1 $L/p.out | cut -c1-240)"
policy "${POL%\}},\"status\":{\"publish_every_s\":0.5}}"
/usr/bin/time -f '%M' -o $L/time timeout -s INT 6 "$RXN" --repo $L/rx watch --no-prompt --interval 1 > $L/w.out 2>&1
m2=$(( $(tail -1 $L/time) / 1024 )); echo "watch --no-prompt with status heartbeats for 6 s: peak ${m2} MB; $(grep -ac 'status' $L/w.out) status line(s): $(grep -a -m1 'status push' $L/w.out | cut -c1-200)"
kill -- -$DP 2>/dev/null; kill $DP 2>/dev/null
panics $L/p.out $L/w.out && { echo "broken: a panic"; exit 0; }
[ "$m1" -gt 200 ] || [ "$m2" -gt 200 ] && { echo "broken: an advertised 300 MiB commit is read whole by every push (publish ${m1} MB, heartbeats ${m2} MB)"; exit 0; }
echo held; exit 1
