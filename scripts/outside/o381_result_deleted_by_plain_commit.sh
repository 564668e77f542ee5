#!/bin/bash
# o381: a peer on `rx-node` removes LAB1's published result of CAP_1 with a plain commit on top (`git rm`, no
# forced push: the new tip descends from the one the main PC saw). The main PC had listed CAP_1 from LAB1;
# afterwards `results` listed 0 results, exit 0, without a word, and `results nodes` said "no node has
# published a result or a status yet". A later commit that takes a seen result away (or replaces it) is a
# rewrite as much as a forced push: it must be named, at that run and every later one.
source "$(dirname "$0")/lib.sh"
newlab o381
published CAP_1
[ -d "$L/peer/rx-results/CAP_1/LAB1" ] || { echo "cannot play: CAP_1 was not published"; exit 2; }
"$RXN" --repo $L/main results > $L/r0.out 2>&1
grep -q 'CAP_1' $L/r0.out || { echo "cannot play: the main PC did not list CAP_1 first"; exit 2; }
(cd $L/peer && G rm -q -r rx-results/CAP_1 && G commit -qm tidy && G push -q origin HEAD:rx-node) ||
  { echo "cannot play: the peer's push failed"; exit 2; }
"$RXN" --repo $L/main results > $L/r1.out 2>&1; rc1=$?
"$RXN" --repo $L/main results > $L/r2.out 2>&1; rc2=$?
echo "before: $(grep -c 'CAP_1' $L/r0.out) line(s) naming CAP_1"
echo "after the peer's commit: results exit $rc1"; cut -c1-240 $L/r1.out | head -4
echo "again: results exit $rc2"; cut -c1-240 $L/r2.out | head -4
panics $L/r1.out $L/r2.out && { echo "broken: results panicked"; exit 0; }
for f in r1 r2; do
  grep -q 'rx-results/CAP_1/LAB1 removed' $L/$f.out ||
    { echo "broken: LAB1's result of CAP_1, removed by a peer's plain commit, vanished from results without a word ($f)"; exit 0; }
done
echo held; exit 1
