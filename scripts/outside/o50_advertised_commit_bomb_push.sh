#!/bin/bash
# o50: the main PC pushes a branch `evil` holding one commit whose message is 300 MiB of 'A' (300 KiB on the wire); the
# operator's plain `git fetch` (or `git pull`) brings every branch, so the checkout holds it. libgit2's push reads every
# advertised commit it holds whole (to leave it out of the pack): each `publish --push` and each status heartbeat then
# inflated 300 MiB (publish peaked at 637 MB). Witness: /usr/bin/time's maximum resident size of the rxnode process.
. "$(dirname "$0")/lib.sh"
newlab pushbomb; published PB1
{ hdr PB2 YES YES NO; plan '{"op":"rx_capture","device":"driver=rxsim","frequency_hz":100e6,"sample_rate_hz":2e6,"gain_db":20,"duration_s":0.2}'; } | post; approve
rxn --sim run PB2 >/dev/null 2>&1
P=$(git -C $L/origin.git rev-parse video-development); T=$(git -C $L/origin.git rev-parse video-development^{tree})
B=$(python3 - $L/origin.git $P $T $((300<<20)) <<'PY'
import hashlib, os, sys, zlib
gitdir, parent, tree, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
head = (f"tree {tree}\nparent {parent}\nauthor M <m@x.invalid> 1700000000 +0000\n"
        f"committer M <m@x.invalid> 1700000000 +0000\n\n").encode()
hdr = f"commit {len(head) + n}\0".encode()
h = hashlib.sha1(); z = zlib.compressobj(9); out = bytearray()
for b in (hdr, head): h.update(b); out += z.compress(b)
chunk = b"A" * (1 << 20); left = n
while left:
    c = chunk[:min(left, len(chunk))]; h.update(c); out += z.compress(c); left -= len(c)
out += z.flush(); oid = h.hexdigest()
d = os.path.join(gitdir, "objects", oid[:2]); os.makedirs(d, exist_ok=True)
open(os.path.join(d, oid[2:]), "wb").write(out); print(oid)
PY
)
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
