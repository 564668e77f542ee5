#!/bin/bash
# o150: hostile branch against the trust root: the main PC commits a one-line `.gitignore` of `!/.local/`. A
# `.gitignore` outranks `.git/info/exclude`, so after the operator's `git pull` Git sees the node's policy, state,
# ledger and raw IQ (`git add -A` stages them), while libgit2's own ignore check still called every one of them
# ignored: `watch` examined the tip, `doctor` said "PASS .local ignored" and "PASS trust root", and `run` trusted the
# policy. Expected: the watcher refuses the tip before the pull (naming the rule's effect), and after the pull every
# command refuses the trust root, naming a file Git can see. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab gitignore; policy
approve; echo "first poll: rc=$? (writes /.local/ into .git/info/exclude)"
(cd "$L/main" && printf '!/.local/\n' > .gitignore && G add .gitignore && G commit -qm "ignore rules" && G push -q origin video-development)
bad=""
echo A | rxn watch --once --interval 0.2 > "$L/w1.out" 2>&1; rc=$?; echo "watch on the tip with the rule: rc=$rc"; grep -m1 gitignore "$L/w1.out"
[ $rc -eq 0 ] && bad="$bad watch-examined-the-tip"
(cd "$L/rx" && G pull -q --ff-only)
echo "after the pull, git add -A would stage: $(cd "$L/rx" && git add -A --dry-run | grep -c "'.local/")"
(cd "$L/rx" && git add -A --dry-run | grep -E 'policy|ledger' | sed 's/^/  /')
rxn doctor > "$L/d.out" 2>&1; grep -E '\.local ignored|trust root' "$L/d.out"
grep -qE "^PASS (\.local ignored|trust root)" "$L/d.out" && bad="$bad doctor-pass"
echo A | rxn watch --once --interval 0.2 > "$L/w2.out" 2>&1; rc=$?; echo "watch after the pull: rc=$rc"; grep -m1 "Git can see" "$L/w2.out"
[ $rc -eq 0 ] && bad="$bad watch-trusted"
panics "$L/w1.out" "$L/w2.out" "$L/d.out" && bad="$bad panic"
[ -n "$bad" ] && { echo "broken: a committed .gitignore exposes the trust root to Git:$bad"; exit 0; }; echo held; exit 1
