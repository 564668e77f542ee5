#!/bin/bash
# o407: a new user runs the node in a checkout whose .local/ they cannot write (another user's clone, a folder made
# immutable or read-only): `rxnode doctor` said PASS for the state, the ledger and the watcher and named nothing
# about it, and `rxnode watch --once` then failed with the bare OS error ("cannot create
# ./.local/rxnode.lock.guard: Permission denied (os error 13)") and no fix.
# Expected: doctor FAILs a check naming the folder, and watch's error names the fix.
# As root, whom file modes do not stop, the folder is made immutable (chattr +i); otherwise read-only.
# Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab o407
rxn node set-name LAB1 >/dev/null 2>&1 || { echo "cannot play: set-name failed"; exit 2; }
if [ "$(id -u)" = 0 ]; then lock() { chattr "$1"i "$L/rx/.local"; }; else lock() { [ "$1" = + ] && chmod a-w "$L/rx/.local" || chmod u+w "$L/rx/.local"; }; fi
lock + || { echo "cannot play: cannot make .local unwritable"; exit 2; }
touch "$L/rx/.local/probe" 2>/dev/null && { lock -; echo "cannot play: .local still writable"; exit 2; }
rxn --sim doctor > $L/doctor.out 2>&1; drc=$?
rxn watch --once < /dev/null > $L/watch.out 2>&1; wrc=$?
lock -
echo "doctor exit $drc:"; grep -vE '^(PASS|SKIP)' $L/doctor.out | grep -v avahi | head -8
echo "watch --once exit $wrc: $(head -3 $L/watch.out)"
bad=""
grep -E '^FAIL' $L/doctor.out | grep -q "$L/rx/.local" || bad="$bad doctor names no check failing on $L/rx/.local;"
[ "$wrc" = 0 ] && bad="$bad watch exited 0;"
grep -q "fix:" $L/watch.out || bad="$bad watch's error names no fix;"
panics $L/doctor.out $L/watch.out >/dev/null && bad="$bad a panic;"
[ -n "$bad" ] && { echo "broken: an unwritable node folder is not named with a fix:$bad"; exit 0; }
echo held; exit 1
