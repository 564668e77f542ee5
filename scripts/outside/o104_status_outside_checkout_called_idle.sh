#!/bin/bash
# o104: the operator opens a new terminal (in the home folder) and types `rxnode status` while the watcher runs in the
# lab checkout with a task waiting: rxnode answered "watcher: not running", "pending: -" with exit 0, a false picture;
# `state rebuild` there wrote a fresh state into a `.local/` it made, and `run` called the task unknown.
# Expected: these commands say the folder is no Git checkout and how to name it; nothing is made.
source "$(dirname "$0")/lib.sh"
newlab o104; policy; rxn node set-name LAB1 >/dev/null
{ hdr T1 YES YES NO; plan '{"op":"rx_capture","device":"driver=rxsim","frequency_hz":100e6,"sample_rate_hz":2e6,"gain_db":20,"duration_s":0.2}'; } | post
rxn watch --once --interval 0.2 < /dev/null > /dev/null 2>&1
mkdir -p "$L/elsewhere"; cd "$L/elsewhere"
"$RXN" status > "$L/status.out" 2>&1; st=$?
"$RXN" state rebuild > "$L/rebuild.out" 2>&1; rb=$?
echo "in the checkout: $(rxn status | grep '^pending:' | tr -s ' ')"
echo "elsewhere: status exit $st: $(head -5 "$L/status.out" | tr -s ' ' | tr '\n' ' ' | cut -c1-200)"
echo "elsewhere: state rebuild exit $rb: $(head -1 "$L/rebuild.out" | cut -c1-200)"
echo "made elsewhere: $(ls -A "$L/elsewhere" | tr '\n' ' ')"
panics "$L/status.out" "$L/rebuild.out" && { echo "broken: a panic"; exit 0; }
[ $st -eq 0 ] && { echo "broken: status in a folder that is no checkout answers an empty node, exit 0"; exit 0; }
[ -n "$(ls -A "$L/elsewhere")" ] && { echo "broken: a node command made files in a folder that is no checkout"; exit 0; }
grep -q 'not a Git checkout' "$L/status.out" && grep -q 'fix:' "$L/status.out" || { echo "broken: status does not say the folder is no checkout with the fix"; exit 0; }
echo held; exit 1
