#!/bin/bash
# o151: hostile branch against the trust root, one folder down: the main PC commits docs/.local/rxnode-policy.json
# (RX limits 100 000 s and 200 dB). In a clone that is no node yet, `rxnode capture` run from docs/ took docs/.local/
# as its node folder, found no checkout there (so none of the Git-level checks ran) and used the committed policy.
# Expected: refused (exit 3) naming the work tree, the radio never opened. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab subfolder
(cd "$L/main" && mkdir -p docs/.local && echo '{"rx":{"max_duration_s":100000,"max_gain_db":200}}' > docs/.local/rxnode-policy.json \
  && G add -f docs/.local && G commit -qm "lab notes" && G push -q origin video-development)
(cd "$L/rx" && G pull -q --ff-only)
"$RXN" --sim --repo "$L/rx/docs" capture -d driver=rxsim -f 100M -r 2M -t 0.1 -g 20 > "$L/c.out" 2>&1; rc=$?
echo "capture from docs/: rc=$rc"; tail -1 "$L/c.out"; echo "radio log lines: $(grep -c . "$RXSIM_EVENT_LOG")"
bad=""
[ $rc -ne 3 ] && bad="$bad not-refused"
grep -q "lies inside the Git work tree" "$L/c.out" || bad="$bad no-reason"
panics "$L/c.out" && bad="$bad panic"
[ -n "$bad" ] && { echo "broken: a Git-written docs/.local/ is trusted:$bad"; exit 0; }; echo held; exit 1
