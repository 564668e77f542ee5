#!/bin/bash
# o348: the disk holding the checkout's .local/ is full (a 64 KiB tmpfs mounted there, filled; needs root).
# `mark-completed` failed with `cannot write ./.local/rxnode-run.lock.tmp-N: No space left on device (os error 28)`,
# exit 1, `"fix": null` under --json: the file named, not the way out; `node set-name` and `run` the same.
# Expected: each says which folder's disk is full and the fix (free space, then run the command again).
# Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab o348; policy; rxn node set-name LAB1 >/dev/null
{ hdr FULL YES YES NO; plan '{"op":"inventory"}'; } | post; approve
O=$L/rx/.local; cp -a $O $L/keep
mount -t tmpfs -o size=64k tmpfs $O 2>/dev/null || { echo "cannot play: a tmpfs mount needs root"; exit 2; }
trap 'umount $O 2>/dev/null' EXIT
cp -a $L/keep/. $O/; dd if=/dev/zero of=$O/fill bs=4k count=100 2>/dev/null
rxn --json mark-completed FULL > $L/mc.out 2> $L/mc.err; echo "mark-completed: rc=$?"; tail -1 $L/mc.err | cut -c1-400
rxn node set-name LAB2 > $L/sn.out 2> $L/sn.err; echo "node set-name: rc=$?"; grep -a error $L/sn.err | cut -c1-400
rxn --sim run FULL > $L/run.out 2> $L/run.err; echo "run: rc=$?"; grep -a error $L/run.err | cut -c1-400
rm -f $O/fill
panics $L/mc.err $L/sn.err $L/run.err && { echo "broken: panic"; exit 0; }
bad=""
python3 - $L/mc.err <<'PY' || bad="$bad mark-completed --json fix is not the way out;"
import json, sys
e = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])["error"]
sys.exit(0 if (e.get("fix") or "").startswith("free space") and "the disk holding" in e["message"] else 1)
PY
for f in sn run; do grep -q 'the disk holding .* is full — fix: free space on it, then run the command again' $L/$f.err || bad="$bad $f names no fix;"; done
[ -n "$bad" ] && { echo "broken: a full disk names a file, not the way out:$bad"; exit 0; }
echo held; exit 1
