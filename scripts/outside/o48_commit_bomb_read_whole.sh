#!/bin/bash
# o48: the main PC pushes one commit whose message is 300 MiB of 'A' — a zlib bomb of 300 KiB on the wire (a few MiB
# would carry GiBs). The watcher read every commit of the branch whole (the fetch's tip, the walk, the ancestry checks):
# one `watch --once` over git:// peaked at 631 MB. Witness: /usr/bin/time's maximum resident size of the rxnode process.
. "$(dirname "$0")/lib.sh"
newlab commitbomb; policy
printf 'TASK_ID = CB1\nTASK_TITLE = t\nSOURCE_BRANCH = video-development\nEXPECTED_HEAD = %s\nREQUIRES_APPROVAL = YES\nHARDWARE_ACCESS = NO\nRF_RX = NO\nRF_TX = NO\nALLOW_COMMIT = NO\nALLOW_PUSH = RX_RESULT_ONLY\n\nmanual\n' "$BASE" | post
rxn watch --once --interval 0.2 </dev/null >/dev/null 2>&1     # the marker is now the tip
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
git -C $L/origin.git update-ref refs/heads/video-development $B
echo "bomb commit $B: $(du -k $L/origin.git/objects/${B:0:2}/${B:2} | cut -f1) KiB on disk, $(git -C $L/origin.git cat-file -s $B) bytes inflated"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
setsid git daemon --reuseaddr --listen=127.0.0.1 --port=$PORT --base-path=$L --export-all $L >/dev/null 2>&1 & DP=$!
for i in $(seq 100); do (echo > /dev/tcp/127.0.0.1/$PORT) 2>/dev/null && break; sleep 0.1; done
git -C $L/rx remote set-url origin git://127.0.0.1:$PORT/origin.git
/usr/bin/time -f '%M %e' -o $L/time "$RXN" --repo $L/rx watch --once --interval 0.2 </dev/null >$L/w.out 2>&1; rc=$?
kill -- -$DP 2>/dev/null; kill $DP 2>/dev/null
read kb secs < <(tail -1 $L/time); mb=$((kb/1024))
echo "watch --once: rc=$rc, peak memory ${mb} MB, ${secs} s"; tail -3 $L/w.out | cut -c1-400
panics $L/w.out && { echo "broken: a panic"; exit 0; }
[ "$mb" -gt 200 ] && { echo "broken: one commit of 300 MiB (a ${mb} MB peak) on the watched branch is read whole by the watcher"; exit 0; }
echo held; exit 1
