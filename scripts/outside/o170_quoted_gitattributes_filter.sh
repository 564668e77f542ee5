#!/bin/bash
# o170: hostile branch against the trust root: the main PC commits a `.gitattributes` whose pattern is C-style
# quoted, `".local/**" filter=hostile` (and `"\056local/…"`, an octal escape). Git reads a pattern that starts with `"`
# as a quoted string, so `git check-attr` gives the node's policy, state and ledger `filter: hostile`; libgit2 took
# the quotes as part of the pattern, so `doctor` said "PASS trust root" and `run` trusted the policy. Expected: every
# command refuses the trust root after the pull, naming filter=hostile. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab qattr; policy
approve >/dev/null; echo "first poll: rc=$?"
bad=""
for rule in '".local/**" filter=hostile' '"\056local/rxnode-policy.json" filter=hostile'; do
  (cd "$L/main" && printf '%s\n' "$rule" > .gitattributes && G add .gitattributes && G commit -qm attributes && G push -q origin video-development)
  (cd "$L/rx" && G pull -q --ff-only)
  echo "rule: $rule"
  echo "  git check-attr: $(cd "$L/rx" && git check-attr filter -- .local/rxnode-policy.json)"
  rxn doctor > "$L/d.out" 2>&1; grep -E '^[A-Z]+ +trust root' "$L/d.out" | head -2 | sed 's/^/  /'
  grep -qE '^PASS +trust root' "$L/d.out" && bad="$bad doctor-pass"
  rxn status > "$L/s.out" 2>&1; rc=$?; echo "  status: rc=$rc $(grep -m1 -o 'filter=[a-z]*' "$L/s.out")"
  [ $rc -ne 3 ] && bad="$bad status-rc$rc"
  panics "$L/d.out" "$L/s.out" && bad="$bad panic"
done
[ -n "$bad" ] && { echo "broken: a quoted .gitattributes pattern gives the node's files a filter the check does not see:$bad"; exit 0; }; echo held; exit 1
