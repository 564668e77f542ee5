#!/bin/bash
# o402: a peer on `rx-node` deletes LAB1's published result of CAP_1 with a plain commit (`git rm`, no forced
# push) before the main PC ever looked: its first `results` listed 0 results, exit 0, without a word, though
# the branch's own history shows the commit that published rx-results/CAP_1/LAB1 and the one that took it away.
# The same between two looks: the main PC looked (CAP_1 gone, nothing else), LAB1 published CAP_2, a peer
# deleted it, and the next look compared only the two tips it saw, so CAP_2 vanished without a word too.
source "$(dirname "$0")/lib.sh"
newlab o402
published CAP_1
[ -d "$L/peer/rx-results/CAP_1/LAB1" ] || { echo "cannot play: CAP_1 was not published"; exit 2; }
(cd $L/peer && G rm -q -r rx-results/CAP_1 && G commit -qm tidy && G push -q origin HEAD:rx-node) ||
  { echo "cannot play: the peer's push failed"; exit 2; }
"$RXN" --repo $L/main results > $L/r1.out 2>&1; rc1=$?
"$RXN" --repo $L/main results > $L/r2.out 2>&1; rc2=$?
# Between two looks: CAP_2 published and deleted after the look above.
{ hdr CAP_2 NO NO NO; printf '\n# a manual task\n'; } | post; approve
echo PASS | rxn mark-completed CAP_2 --status PASS >/dev/null 2>&1
echo "PUBLISH CAP_2" | rxn publish CAP_2 --push > $L/pub2.out 2>&1
(cd $L/peer && G pull -q --ff-only origin rx-node 2>/dev/null && [ -d rx-results/CAP_2/LAB1 ]) ||
  { echo "cannot play: LAB1 did not publish CAP_2"; cat $L/pub2.out; exit 2; }
(cd $L/peer && G rm -q -r rx-results/CAP_2 && G commit -qm tidy2 && G push -q origin HEAD:rx-node) ||
  { echo "cannot play: the peer's second push failed"; exit 2; }
"$RXN" --repo $L/main results > $L/r3.out 2>&1; rc3=$?
echo "rx-node history (the branch itself):"; git -C $L/origin.git log --format='  %h %s' --name-status rx-node -- rx-results | head -12
echo "first look after the peer's commit: results exit $rc1"; cut -c1-300 $L/r1.out | head -4
echo "again: results exit $rc2"; cut -c1-300 $L/r2.out | head -3
echo "after CAP_2 was published and deleted between two looks: results exit $rc3"; cut -c1-200 $L/r3.out | head -2
echo "results named as taken away at that look:"; grep -o 'rx-results/CAP_[0-9]/LAB1 removed ([^)]*)' $L/r3.out | sort -u | sed 's/^/  /'
panics $L/r1.out $L/r2.out $L/r3.out && { echo "broken: results panicked"; exit 0; }
for f in r1 r2; do
  grep -q 'rx-results/CAP_1/LAB1 removed' $L/$f.out ||
    { echo "broken: LAB1's result of CAP_1, deleted by a peer before the main PC's first look, vanished without a word ($f)"; exit 0; }
done
grep -q 'rx-results/CAP_2/LAB1 removed' $L/r3.out ||
  { echo "broken: LAB1's result of CAP_2, published and deleted between two looks, vanished without a word"; exit 0; }
echo held; exit 1
