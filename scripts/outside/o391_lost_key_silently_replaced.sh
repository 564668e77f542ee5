#!/bin/bash
# o391: the node key .git/rxnode/key is lost (deleted, a restore that missed it) after the node approved a task.
# `rxnode node set-name LAB2` made a new key without a word (exit 0: "node name: LAB2"), and the next `status`
# refused the state: the approval, signed with the lost key, "is not signed by this node".
# Expected: set-name refuses (exit 3) naming the key file, what shows the node had one, and the fix (restore it, or
# `--new-key`), writing no key; with --new-key the key is made and the consequences are said.
source "$(dirname "$0")/lib.sh"
newlab o391; policy; rxn node set-name LAB1 >/dev/null
{ hdr M1 NO NO NO; printf '\n# manual\n\nCheck the antenna cable by hand.\n'; } | post; approve
K=$L/rx/.git/rxnode/key; rm $K
rxn node set-name LAB2 > $L/s.out 2> $L/s.err; rc=$?
echo "set-name LAB2 with the key lost: exit $rc: $(cat $L/s.out $L/s.err | tr '\n' ' ' | cut -c1-330)"
bad=""
[ $rc = 3 ] || bad="$bad set-name exit $rc, not 3;"
[ -e $K ] && bad="$bad a new key was made without being asked;"
grep -aq -- "--new-key" $L/s.err && grep -aqF "$K" $L/s.err || bad="$bad the refusal does not name the key file and --new-key;"
rxn node set-name LAB2 --new-key > $L/n.out 2> $L/n.err; rc2=$?
echo "set-name LAB2 --new-key: exit $rc2: $(cat $L/n.out $L/n.err | tr '\n' ' ' | cut -c1-330)"
[ $rc2 = 0 ] && [ -e $K ] && grep -aq "state rebuild" $L/n.err || bad="$bad --new-key did not make the key and say what it means;"
panics $L/*.out $L/*.err && bad="$bad a panic;"
[ -n "$bad" ] && { echo "broken:$bad"; exit 0; }; echo held; exit 1
