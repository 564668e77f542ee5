#!/bin/bash
# o385: a new user runs `rxnode status`, `rxnode run T1` and `rxnode publish T1` in a folder that is no Git
# checkout (their home, a download folder): each said ". is not a Git checkout … fix: run rxnode inside the RX
# clone" — bad usage — but exited 1 ("ran and failed"), while the same mistake one folder down inside a checkout,
# or in a bare repository, exits 2. A script that tells a wrong folder from a failed run by the exit status
# could not.
# Expected: exit 2 with the message and its fix; nothing written in the folder.
# Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab o385; mkdir -p "$L/plain"; cd "$L/plain"
bad=""
for c in "status" "run T1" "publish T1"; do
  "$RXN" $c > $L/out 2>&1; rc=$?
  echo "rxnode $c: rc=$rc: $(head -1 $L/out | cut -c1-120)"
  grep -q "is not a Git checkout" $L/out || bad="$bad $c (no message);"
  [ "$rc" = 2 ] || bad="$bad $c (exit $rc);"
done
[ -z "$(ls -A "$L/plain")" ] || bad="$bad files written: $(ls -A "$L/plain");"
[ -n "$bad" ] && { echo "broken: a command outside any checkout does not exit 2 (bad usage):$bad"; exit 0; }
echo held; exit 1
