#!/bin/bash
# o317: a peer on `rx-node` files an untouched copy of LAB1's result of M1 under rx-results/X2 (its JSON still says
# task_id M1). `results show X2` headed the page "M1 from LAB1: FAIL" and said "the published files do not verify
# …; `rxnode results verify M1` names them": the command it names checks the genuine M1, prints OK and exits 0, so
# the engineer who follows it is told everything is fine. The page is the result filed under X2: it must be named
# X2 and point at `results verify X2`, which fails it.
source "$(dirname "$0")/lib.sh"
newlab o317
policy; rxn node set-name LAB1 >/dev/null
{ hdr M1 NO NO NO; printf '\n# manual\n\nread\n'; } | post; approve
rxn mark-completed M1 --status FAIL --note "clock off" >/dev/null 2>&1; echo "PUBLISH M1" | rxn publish M1 --push >/dev/null 2>&1
G clone -q -b rx-node "$L/origin.git" "$L/peer" 2>/dev/null || { echo "cannot play: M1 was not published"; exit 2; }
(cd $L/peer && mkdir -p rx-results/X2/LAB1 && cp rx-results/M1/LAB1/* rx-results/X2/LAB1/ && G add -A &&
  G commit -qm "rx-results: X2 (FAIL) from LAB1

Task: X2
Node-Name: LAB1" && G push -q origin HEAD:rx-node) || { echo "cannot play: peer push"; exit 2; }
"$RXN" --repo $L/main results show X2 > $L/show.out 2>&1; echo "results show X2: exit $?"; cut -c1-260 $L/show.out | head -3
panics $L/show.out && { echo "broken: results show X2 panicked"; exit 0; }
hint=$(grep -o 'rxnode results verify [A-Za-z0-9_-]*' $L/show.out | head -1)
[ -n "$hint" ] || { echo "cannot play: show named no verify command"; exit 2; }
"$RXN" --repo $L/main results verify ${hint##* } --no-fetch > $L/v.out 2>&1; rc=$?
echo "following it, $hint: exit $rc"; cut -c1-200 $L/v.out | head -3
[ $rc = 0 ] && { echo "broken: results show X2 says the files do not verify and sends the engineer to \`$hint\`, which prints OK (exit 0)"; exit 0; }
head -1 $L/show.out | grep -q '^X2 from LAB1' || { echo "broken: results show X2 is headed $(head -1 $L/show.out | cut -c1-60)"; exit 0; }
echo held; exit 1
