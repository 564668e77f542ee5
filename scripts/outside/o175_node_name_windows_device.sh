#!/bin/bash
# o175: node names against the Windows device names: `rxnode node set-name CON` (and `nul`, `COM1`, `LPT9`) was
# accepted and a task with `TARGET_NODES = CON` was valid, though the name becomes the folder
# `rx-results/<ID>/CON/` on rx-node and the branches `rx-results/CON`, `rx-status/CON` — on Windows a path whose
# stem is CON opens the console device, so a Windows main PC cannot check out rx-node (and a Windows node cannot keep
# its own branch). Task IDs already refused these names. Expected: both refused, naming the device.
# Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab devname; policy
bad=""
for n in CON nul COM1 LPT9; do
  rxn node set-name "$n" > "$L/n.out" 2>&1; rc=$?; echo "set-name $n: rc=$rc $(head -1 "$L/n.out" | cut -c1-150)"
  [ $rc -eq 0 ] && bad="$bad set-name-$n"
  panics "$L/n.out" && bad="$bad panic"
done
{ hdr DEV_1 NO NO NO; printf 'TARGET_NODES = LAB1, CON\n'; } > "$L/task.md"
rxn validate "$L/task.md" > "$L/v.out" 2>&1; rc=$?; echo "validate TARGET_NODES = LAB1, CON: rc=$rc $(grep -m1 -i 'TARGET_NODES' "$L/v.out" | cut -c1-150)"
[ $rc -eq 0 ] && bad="$bad target-nodes"
[ -n "$bad" ] && { echo "broken: a Windows device name is accepted as a node name:$bad"; exit 0; }; echo held; exit 1
