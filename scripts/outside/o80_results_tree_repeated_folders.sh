#!/bin/bash
# o80: a peer pushes rx-node whose rx-results folder names one task folder 2 000 times, and that folder one node
# folder 2 000 times: two trees, about 100 KiB on the wire, that spell 4 million results. Every object is within
# its size bound; the main PC's `rxnode results`, `results verify` and `results report --html` read them all.
# Witness: exit status, wall time and /usr/bin/time's maximum resident size (each run capped at 3 GiB, 120 s).
. "$(dirname "$0")/lib.sh"
newlab repeated
cd $L/main
blob=$(echo '{}' | git hash-object -w --stdin)
node=$(printf '100644 blob %s\tRX_RESULT.json\n' $blob | git mktree)
id=$(for i in $(seq -f '%06g' 1 2000); do printf '040000 tree %s\tN%s\n' $node $i; done | git mktree)
rt=$(for i in $(seq -f '%06g' 1 2000); do printf '040000 tree %s\tT%s\n' $id $i; done | git mktree)
c=$(G commit-tree $(printf '040000 tree %s\trx-results\n' $rt | git mktree) -m peer)
G push -q origin $c:refs/heads/rx-node
echo "rx-node at $c: $(du -sk $L/origin.git/objects | cut -f1) KiB in the origin; 2000 task folders x 2000 node folders"
peak() { ( ulimit -v 3145728; /usr/bin/time -f '%e %M' -o $L/time timeout 120 "$RXN" --repo $L/main "$@" >$L/cmd.out 2>&1 ); echo "$? $(tail -1 $L/time)"; }
bad=""
for q in "results" "results verify T000001 --from N000001" "results report --html $L/site"; do
  read rc s kb < <(peak $q); mb=$(( ${kb:-0} / 1024 ))
  echo "rxnode $q: rc=$rc, ${s} s, peak ${mb} MB: $(grep -a -m1 -E 'refused|error|listed' $L/cmd.out | cut -c1-200)"
  if [ "$rc" != 3 ] || ! grep -q 'to be read (the bounds of one results command)' $L/cmd.out || [ "$mb" -gt 1024 ]; then bad="$bad ${q%% --*}(rc=$rc ${s}s ${mb}MB)"; fi
  panics $L/cmd.out && bad="$bad panic"
done
[ -n "$bad" ] && { echo "broken: 100 KiB of trees naming folders over and over are read as 4 million results:$bad"; exit 0; }
echo held; exit 1
