#!/bin/bash
# o101: `--repo` (or RXNODE_REPO) naming a folder that does not exist, a typo of the lab's path: `status` answered
# an idle, empty node with exit 0 (the real watcher has tasks waiting), `state rebuild` made the folder and its
# parents and said "rebuilt", `run` refused the task as "unknown to this node". Expected: exit 2 naming --repo.
source "$(dirname "$0")/lib.sh"
newlab o101; policy; rxn node set-name LAB1 >/dev/null; cd "$L"
{ hdr T1 NO NO NO; plan '{"op":"manual","instructions":"look at the clock"}'; } | post; approve
typo="$L/rx-lab/oops"
"$RXN" --repo "$typo" status > status.out 2>&1; st=$?
"$RXN" --repo "$typo" state rebuild > rebuild.out 2>&1; rb=$?
"$RXN" --repo "$typo" run T1 > run.out 2>&1; run=$?
echo "status: exit $st: $(head -3 status.out | tr -s ' ' | tr '\n' ' ')"
echo "state rebuild: exit $rb: $(head -1 rebuild.out)"
echo "run T1: exit $run: $(head -1 run.out)"
echo "made: $(ls -d "$L/rx-lab" 2>/dev/null || echo nothing)"
panics status.out rebuild.out run.out && { echo "broken: a panic"; exit 0; }
[ $st -eq 0 ] && { echo "broken: status of a folder that does not exist is exit 0"; exit 0; }
[ -e "$L/rx-lab" ] && { echo "broken: a command made the mistyped --repo folder"; exit 0; }
for f in status.out rebuild.out run.out; do
  grep -q "no such folder" $f || { echo "broken: $f does not say the --repo folder does not exist"; exit 0; }
done
[ $st -eq 2 ] && [ $rb -eq 2 ] && [ $run -eq 2 ] || { echo "broken: exits $st $rb $run, not 2 (bad input)"; exit 0; }
echo held; exit 1
