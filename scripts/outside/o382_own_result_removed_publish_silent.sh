#!/bin/bash
# o382: node LAB1 publishes CAP_1 to `rx-node`; a peer deletes `rx-results/CAP_1/LAB1/` with a plain commit on
# top (`git rm`, no forced push). LAB1 then publishes CAP_2 on that tip: its confirmation showed the three new
# files and "on top of rx-node commit …" and nothing else, and `status` still says CAP_1 published (pushed),
# though the branch the main PC reads no longer holds it. The node knows the commit that published CAP_1:
# before the operator confirms, the result taken away must be named.
source "$(dirname "$0")/lib.sh"
newlab o382
published CAP_1
[ -d "$L/peer/rx-results/CAP_1/LAB1" ] || { echo "cannot play: CAP_1 was not published"; exit 2; }
(cd $L/peer && G rm -q -r rx-results/CAP_1 && G commit -qm tidy && G push -q origin HEAD:rx-node) ||
  { echo "cannot play: the peer's push failed"; exit 2; }
(cd $L/main && G pull -q origin video-development 2>/dev/null)
{ hdr CAP_2 YES YES NO; plan '{"op":"rx_capture","device":"driver=rxsim","frequency_hz":100e6,"sample_rate_hz":2e6,"gain_db":20,"duration_s":0.2}'; } | post; approve
rxn --sim run CAP_2 >/dev/null 2>&1
echo "PUBLISH CAP_2" | rxn publish CAP_2 --push > $L/p.out 2>&1; rc=$?
echo "publish CAP_2: exit $rc"; cut -c1-220 $L/p.out | head -12
echo "rx-node now: $(git -C $L/origin.git ls-tree -r --name-only rx-node | tr '\n' ' ')"
panics $L/p.out && { echo "broken: publish panicked"; exit 0; }
git -C $L/origin.git ls-tree -r --name-only rx-node | grep -q 'rx-results/CAP_2/LAB1/RX_RESULT.json' ||
  { echo "cannot play: CAP_2 was not published"; exit 2; }
grep -q 'rx-results/CAP_1/LAB1/, published by this node in commit .* a later commit removed it' $L/p.out ||
  { echo "broken: LAB1 published CAP_2 on an rx-node that had lost its CAP_1 result without a word"; exit 0; }
echo held; exit 1
