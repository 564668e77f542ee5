#!/bin/bash
# o403: node LAB1 publishes CAP_1 to `rx-node`; a peer deletes `rx-results/CAP_1/LAB1/` with a plain commit on top.
# LAB1's next publication (CAP_2) named the loss ("a later commit removed it; this publication does not put it
# back") and went on without it: the main PC's `results` never listed CAP_1 again and `results verify CAP_1` said
# no result. The node holds the commit that published CAP_1: the publication must put it back, the very tree that
# commit published, so that the main PC finds and verifies it.
source "$(dirname "$0")/lib.sh"
newlab o403
published CAP_1
orig=$(git -C $L/origin.git rev-parse -q --verify rx-node:rx-results/CAP_1/LAB1 2>/dev/null)
[ -n "$orig" ] || { echo "cannot play: CAP_1 was not published"; exit 2; }
(cd $L/peer && G rm -q -r rx-results/CAP_1 && G commit -qm tidy && G push -q origin HEAD:rx-node) ||
  { echo "cannot play: the peer's push failed"; exit 2; }
(cd $L/main && G pull -q origin video-development 2>/dev/null)
{ hdr CAP_2 NO NO NO; printf '\n# a manual task\n'; } | post; approve
echo PASS | rxn mark-completed CAP_2 --status PASS >/dev/null 2>&1
echo "PUBLISH CAP_2" | rxn publish CAP_2 --push > $L/p.out 2>&1; rc=$?
echo "publish CAP_2: exit $rc"; grep 'CAP_1' $L/p.out | cut -c1-260
git -C $L/origin.git ls-tree -r --name-only rx-node | grep -q 'rx-results/CAP_2/LAB1/RX_RESULT.json' ||
  { echo "cannot play: CAP_2 was not published"; exit 2; }
now=$(git -C $L/origin.git rev-parse -q --verify rx-node:rx-results/CAP_1/LAB1 2>/dev/null)
echo "rx-results/CAP_1/LAB1 on rx-node: published as tree $orig, now ${now:-absent}"
"$RXN" --repo $L/main results verify CAP_1 > $L/v.out 2>&1; rcv=$?
echo "main PC: results verify CAP_1: exit $rcv"; cut -c1-220 $L/v.out | head -3
panics $L/p.out $L/v.out && { echo "broken: publish or results panicked"; exit 0; }
[ "$now" = "$orig" ] ||
  { echo "broken: LAB1's publication of CAP_2 named its lost CAP_1 result but did not put it back"; exit 0; }
[ $rcv = 0 ] || { echo "broken: CAP_1, put back, does not verify on the main PC (exit $rcv)"; exit 0; }
echo held; exit 1
