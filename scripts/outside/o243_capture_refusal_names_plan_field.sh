#!/bin/bash
# o243: a new user runs `rxnode capture -d … -f 100M -r 2M -t 20` under a policy of rx.max_duration_s 10 and
# rx.max_gain_db 50: "refused by local policy: gain_db is required while rx.max_gain_db 50 is set", then
# "duration_s 20 exceeds rx.max_duration_s 10" — the plan's field names, not the flags typed (`sweep` says
# "--gain-db is required"). Expected: capture's refusal names --gain-db / --duration-s. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab o243; cd "$L"; policy
rxn --sim capture -d driver=rxsim -f 100M -r 2M -t 1 > a.txt 2>&1; rc1=$?; echo "capture without -g: rc=$rc1 $(head -c 200 a.txt)"
rxn --sim capture -d driver=rxsim -f 100M -r 2M -t 20 -g 10 > b.txt 2>&1; rc2=$?; echo "capture -t 20: rc=$rc2 $(head -c 200 b.txt)"
rxn --sim sweep -d driver=rxsim --start-hz 88M --stop-hz 108M -B 10k > c.txt 2>&1; echo "sweep without -g: rc=$? $(head -c 200 c.txt)"
echo "rxsim log: $(wc -l < "$RXSIM_EVENT_LOG") line(s), $(grep -c activateStream "$RXSIM_EVENT_LOG") stream activation(s)"
panics a.txt b.txt c.txt && { echo "broken: panic"; exit 0; }
[ $rc1 = 3 ] && [ $rc2 = 3 ] || { echo "broken: the policy refusals did not exit 3 ($rc1, $rc2)"; exit 0; }
grep -q activateStream "$RXSIM_EVENT_LOG" && { echo "broken: a refused capture streamed"; exit 0; }
grep -q -- '--gain-db is required' a.txt && grep -q -- '--duration-s 20 exceeds' b.txt \
  || { echo "broken: capture's policy refusal names the plan field, not the flag typed"; exit 0; }
echo held; exit 1
