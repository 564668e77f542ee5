#!/bin/bash
# o102: the operator guide's upgrade steps say `rxnode health test -d driver=…` for each radio, and every other radio
# command names a radio with `-d`/`--device`; `health test` took the device args only without a flag and refused
# `-d` as "unexpected argument '-d' found" (exit 2): the radio stayed UNTESTED. Expected: `-d ARGS` tests it.
source "$(dirname "$0")/lib.sh"
newlab o102; policy; cd "$L"
rxn --sim health test -d driver=rxsim,serial=o102 > test.out 2>&1; rc=$?
rxn --sim health > health.out 2>&1
echo "health test -d driver=rxsim,serial=o102: exit $rc: $(head -1 test.out)"
echo "health: $(grep -a o102 health.out | head -1)"
panics test.out health.out && { echo "broken: a panic"; exit 0; }
[ $rc -ne 0 ] && { echo "broken: health test -d, as the operator guide writes it, exits $rc"; exit 0; }
grep -aq 'GOOD' health.out || { echo "broken: the radio is not GOOD after its self-test"; exit 0; }
echo held; exit 1
