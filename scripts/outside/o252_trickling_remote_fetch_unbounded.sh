#!/bin/bash
# o252: the remote answers within every read timeout and never finishes: a git:// server whose ref advertisement
# sends one line a second, for ever. The read timeout (here 2 s, RXNODE_GIT_TIMEOUT_S) bounds one read, not the
# fetch, and libgit2 calls back only during a pack: `watch --once` kept fetching for as long as the remote kept
# sending (still fetching after 200 s; the watcher's loop the same, stuck in one poll). Witness: the time
# `watch --once` takes, stopped by `timeout 40`, and its error line.
. "$(dirname "$0")/lib.sh"
newlab trickle
python3 - > $L/port <<'PY' &
import socket, threading, time, sys
s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(8); print(s.getsockname()[1], flush=True); sys.stdout.close()
def serve(c):
    try:
        c.recv(4096); oid = b'1' * 40
        first = oid + b' refs/heads/video-development\0multi_ack side-band-64k ofs-delta\n'
        c.sendall(b'%04x' % (len(first) + 4) + first)
        for i in range(100000):
            time.sleep(1); line = oid + b' refs/tags/t%09d\n' % i; c.sendall(b'%04x' % (len(line) + 4) + line)
    except OSError:
        pass
s.settimeout(60)
while True:
    try: c, _ = s.accept()
    except OSError: break
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PY
SRV=$!
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -s $L/port ] && break; sleep 0.2; done
git -C $L/rx remote add slow git://127.0.0.1:$(cat $L/port)/lab.git
s=$(date +%s)
RXNODE_GIT_TIMEOUT_S=2 timeout 40 "$RXN" --repo $L/rx --remote slow watch --once --no-prompt </dev/null >$L/w.out 2>&1; rc=$?
t=$(( $(date +%s) - s )); kill $SRV 2>/dev/null
echo "watch --once against a remote sending one advertisement line a second (read timeout 2 s): rc=$rc after ${t} s"
grep -a 'fetch slow' $L/w.out | cut -c1-240
panics $L/w.out && { echo "broken: a panic"; exit 0; }
[ "$rc" = 124 ] && { echo "broken: still fetching after 40 s: the fetch has no deadline a trickling remote cannot outrun"; exit 0; }
grep -aq 'abandoned after' $L/w.out || { echo "broken: the fetch ended (rc=$rc) without saying it was abandoned at its deadline"; exit 0; }
echo held; exit 1
