#!/usr/bin/env bash
# A restored backup of a node-sealed file (health, name, calibration) is an older version this node
# really wrote, so its MAC verifies: a radio that failed its self-test became GOOD again, and a renamed
# node took its old name back. Each must be refused as older than the one the node wrote last.
source "$(dirname "$0")/lib.sh"
newlab o277
rxn --sim health test driver=rxsim,serial=X >/dev/null 2>&1
cp "$L/rx/.local/rxnode-health.json" "$L/health.bak"
rxn --sim health test driver=rxsim,serial=X,fail_open=1 >/dev/null 2>&1
echo "after the failed self-test: $(rxn health 2>&1 | grep -a 'serial=X ' | cut -c1-60)"
cp "$L/health.bak" "$L/rx/.local/rxnode-health.json"
rxn health > "$L/health.out" 2>&1; hrc=$?
echo "backup restored, health rc=$hrc: $(grep -a 'serial=X \|older' "$L/health.out" | head -2 | cut -c1-160)"
rxn node set-name LAB-OLD >/dev/null 2>&1; cp "$L/rx/.local/rxnode-node.json" "$L/node.bak"
rxn node set-name LAB-NEW >/dev/null 2>&1; cp "$L/node.bak" "$L/rx/.local/rxnode-node.json"
rxn node show > "$L/node.out" 2>&1; nrc=$?
echo "node file restored, node show rc=$nrc: $(head -1 "$L/node.out" | cut -c1-160)"
good=$(grep -ac '^GOOD *driver=rxsim,serial=X ' "$L/health.out"); old=$(grep -ac 'node name: LAB-OLD' "$L/node.out")
[ "$good" -gt 0 ] || [ "$old" -gt 0 ] && {
  echo "broken: an older sealed file restored is trusted (radio X GOOD again after its failed self-test: $good; node named LAB-OLD again: $old)"; exit 0; }
[ $hrc -eq 3 ] && [ $nrc -eq 3 ] && grep -q 'older' "$L/health.out" && grep -q 'set-name' "$L/node.out" || { echo "broken: not refused naming the file and the fix (health rc=$hrc, node show rc=$nrc)"; exit 0; }
rxn node set-name LAB-NEW >/dev/null 2>&1 && [ "$(rxn node show 2>&1 | head -1)" = "node name: LAB-NEW" ] || { echo "broken: set-name does not repair the refused node file"; exit 0; }
echo held; exit 1
