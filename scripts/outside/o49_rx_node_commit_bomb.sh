#!/bin/bash
# o49: a peer pushes rx-node with one commit whose message is 300 MiB of 'A' (300 KiB on the wire) on top of a real
# result. The main PC's `rxnode results` and a node's `rxnode publish --push` read rx-node's commits whole.
# Witness: /usr/bin/time's maximum resident size of each rxnode process.
. "$(dirname "$0")/lib.sh"
newlab rxnodebomb; published PB1
{ hdr PB2 YES YES NO; plan '{"op":"rx_capture","device":"driver=rxsim","frequency_hz":100e6,"sample_rate_hz":2e6,"gain_db":20,"duration_s":0.2}'; } | post; approve
rxn --sim run PB2 >/dev/null 2>&1
B=$(bomb_commit $L/origin.git rx-node)
git -C $L/origin.git update-ref refs/heads/rx-node $B
echo "rx-node now at $B: $(git -C $L/origin.git cat-file -s $B) bytes inflated"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
setsid git daemon --reuseaddr --listen=127.0.0.1 --port=$PORT --base-path=$L --export-all --enable=receive-pack $L >/dev/null 2>&1 & DP=$!
for i in $(seq 100); do (echo > /dev/tcp/127.0.0.1/$PORT) 2>/dev/null && break; sleep 0.1; done
for d in main rx; do git -C $L/$d remote set-url origin git://127.0.0.1:$PORT/origin.git; done
peak() { /usr/bin/time -f '%M' -o $L/time "$RXN" "$@" >$L/cmd.out 2>&1; echo "$? $(( $(tail -1 $L/time) / 1024 ))"; }
read rc1 m1 < <(peak --repo $L/main results); echo "main PC: rxnode results: rc=$rc1, peak ${m1} MB: $(tail -1 $L/cmd.out | cut -c1-300)"
read rc2 m2 < <(echo "PUBLISH PB2" | peak --repo $L/rx publish PB2 --push); echo "node: rxnode publish PB2 --push: rc=$rc2, peak ${m2} MB: $(tail -1 $L/cmd.out | cut -c1-300)"
echo "rx-node on origin now: $(git -C $L/origin.git log --format='%h %s' -1 rx-node | cut -c1-80)"
kill -- -$DP 2>/dev/null; kill $DP 2>/dev/null
[ "$m1" -gt 200 ] || [ "$m2" -gt 200 ] && { echo "broken: a 300 MiB commit on rx-node is read whole (results ${m1} MB, publish ${m2} MB)"; exit 0; }
panics $L/cmd.out && { echo "broken: a panic"; exit 0; }
echo held; exit 1
