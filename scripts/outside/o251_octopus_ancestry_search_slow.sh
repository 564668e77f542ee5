#!/bin/bash
# o251: the main PC pushes an octopus merge of 500 side commits, each itself a merge listing 40 000 parents (1.9 MB
# per commit, just under the 2 MiB a commit may have; some 10 MB pushed), then task versions on top whose EXPECTED_HEAD
# is a commit present here but not their ancestor. Checking each EXPECTED_HEAD parsed every side commit, twice, within
# the 2 000-commit bound: about 6 s of CPU per task version (2 000 sides: 30 s; 50 versions a poll: 25 min). Witness:
# /usr/bin/time of one `watch --once` (the checkout fetched first with git, so the time is the examination's alone).
. "$(dirname "$0")/lib.sh"
NB=500
newlab octopus
policy
rxn watch --once --no-prompt </dev/null >$L/poll0.out 2>&1
cd $L/main
T=$(python3 - .git $(G rev-parse HEAD) $(G rev-parse HEAD^{tree}) $NB <<'PY'
import hashlib, os, sys, zlib
gitdir, base, tree, nb = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def put(kind, body):
    raw = f"{kind} {len(body)}\0".encode() + body
    oid = hashlib.sha1(raw).hexdigest(); d = os.path.join(gitdir, "objects", oid[:2]); os.makedirs(d, exist_ok=True)
    open(os.path.join(d, oid[2:]), "wb").write(zlib.compress(raw, 6)); return oid
par = (f"parent {base}\n" * 40000).encode()
sides = [put("commit", f"tree {tree}\nparent {base}\n".encode() + par
             + f"author M <m@x.invalid> {1800000000+j} +0000\ncommitter M <m@x.invalid> {1800000000+j} +0000\n\nside {j}\n".encode())
         for j in range(nb)]
print(put("commit", (f"tree {tree}\nparent {base}\n" + "".join(f"parent {b}\n" for b in sides)
                     + "author M <m@x.invalid> 1700000000 +0000\ncommitter M <m@x.invalid> 1700000000 +0000\n\nmerge\n").encode()))
PY
)
U=$(echo unrelated | G commit-tree $(G rev-parse HEAD^{tree}))
G reset -q --hard $T; mkdir -p docs/handoff
for v in 1 2; do hdr OC$v NO NO NO | sed "s/^EXPECTED_HEAD = .*/EXPECTED_HEAD = $U/" > docs/handoff/NEXT_RX_TASK.md; G add -A; G commit -qm "post OC$v"; done
M=$(echo later | G commit-tree HEAD^{tree} -p HEAD -p $U); G reset -q --hard $M
G -c pack.window=0 push -q origin video-development
cd - >/dev/null
git -C $L/rx fetch -q origin
/usr/bin/time -o $L/time -f '%e %U %M' "$RXN" --repo $L/rx watch --once --no-prompt </dev/null >$L/poll.out 2>&1; rc=$?
read secs user kb < $L/time
echo "poll of 2 task versions behind an octopus of $NB merges of 40 000 parents: rc=$rc, ${secs} s (${user} s CPU), peak $((kb / 1024)) MB"
grep -a 'OC[12] rejected' $L/poll.out | cut -c1-200
panics $L/poll.out && { echo "broken: a panic"; exit 0; }
[ "$(grep -ac 'is not a strict ancestor' $L/poll.out)" = 2 ] || { echo "broken: the 2 task versions were not both refused (rc=$rc)"; exit 0; }
awk -v u="$user" 'BEGIN { exit !(u > 5) }' && { echo "broken: checking 2 EXPECTED_HEADs took ${user} s of CPU: every side commit of the octopus was parsed"; exit 0; }
echo held; exit 1
