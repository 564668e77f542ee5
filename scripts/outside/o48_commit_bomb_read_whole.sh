#!/bin/bash
# o48: the main PC pushes one commit whose message is 300 MiB of 'A' — a zlib bomb of 300 KiB on the wire (a few MiB
# would carry GiBs). The watcher read every commit of the branch whole (the fetch's tip, the walk, the ancestry checks):
# one `watch --once` over git:// peaked at 631 MB. Witness: /usr/bin/time's maximum resident size of the rxnode process.
. "$(dirname "$0")/lib.sh"
newlab commitbomb; policy
printf 'TASK_ID = CB1\nTASK_TITLE = t\nSOURCE_BRANCH = video-development\nEXPECTED_HEAD = %s\nREQUIRES_APPROVAL = YES\nHARDWARE_ACCESS = NO\nRF_RX = NO\nRF_TX = NO\nALLOW_COMMIT = NO\nALLOW_PUSH = RX_RESULT_ONLY\n\nmanual\n' "$BASE" | post
rxn watch --once --interval 0.2 </dev/null >/dev/null 2>&1     # the marker is now the tip
B=$(bomb_commit $L/origin.git video-development)
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
