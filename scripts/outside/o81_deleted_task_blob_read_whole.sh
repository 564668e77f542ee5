#!/bin/bash
# o81: the main PC commits a 300 MiB task file (a loose blob of 300 KiB; about 1.5 MiB in the pack pushed), which the
# watcher refuses unread, then deletes it. Examining the deletion, the watcher named what the deleted file held by
# loading the blob whole before looking at its size. Witness: /usr/bin/time's maximum resident size of each poll.
. "$(dirname "$0")/lib.sh"
newlab deletedblob
{ hdr DB1 NO NO NO; } | post; approve
B=$(python3 - "$L/main/.git" $((300<<20)) <<'PY'
import hashlib, os, sys, zlib
gitdir, n = sys.argv[1], int(sys.argv[2])
hdr = f"blob {n}\0".encode(); h = hashlib.sha1(); z = zlib.compressobj(9); out = bytearray()
h.update(hdr); out += z.compress(hdr)
chunk = b"#" * (1 << 20); left = n
while left:
    c = chunk[:min(left, len(chunk))]; h.update(c); out += z.compress(c); left -= len(c)
out += z.flush(); oid = h.hexdigest()
d = os.path.join(gitdir, "objects", oid[:2]); os.makedirs(d, exist_ok=True)
open(os.path.join(d, oid[2:]), "wb").write(out); print(oid)
PY
)
(cd $L/main && G update-index --cacheinfo 100644,$B,docs/handoff/NEXT_RX_TASK.md && G commit -qm big && G push -q origin video-development)
# The fetch inflates and hashes the 300 MiB blob once: 2.5-3.2 s of CPU here, at the edge of the default fetch
# budget (3 s, which o312 checks). This check is about memory, so it gives the fetch room.
poll() { ( ulimit -v 4194304; RXNODE_FETCH_CPU_S=30 /usr/bin/time -f '%M' -o $L/time "$RXN" --repo $L/rx watch --once --interval 0.2 </dev/null >$L/poll.out 2>&1 ); echo "$? $(( $(tail -1 $L/time) / 1024 ))"; }
read rc1 m1 < <(poll); echo "poll of the 300 MiB version: rc=$rc1, peak ${m1} MB: $(grep -a -m1 'not loaded' $L/poll.out | cut -c1-200)"
(cd $L/main && G rm -q --cached docs/handoff/NEXT_RX_TASK.md && G commit -qm gone && G push -q origin video-development)
read rc2 m2 < <(poll); echo "poll of its deletion: rc=$rc2, peak ${m2} MB: $(grep -a -m1 'deleted' $L/poll.out | cut -c1-200)"
panics $L/poll.out && { echo "broken: a panic"; exit 0; }
[ "$rc2" = 0 ] && grep -q 'deleted (it held no usable task)' $L/poll.out || { echo "broken: the deletion was not examined (rc=$rc2)"; exit 0; }
[ "$m2" -gt 150 ] && { echo "broken: examining the deletion of a 300 MiB task file loaded it whole (peak ${m2} MB)"; exit 0; }
echo held; exit 1
