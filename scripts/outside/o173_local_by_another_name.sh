#!/bin/bash
# o173: hostile branch against the trust root: the main PC commits node files under names that other file systems
# fold into `.local`: `LOCAL~1/` (the 8.3 short name Windows gives `.local`), `.local./` (Win32 drops trailing dots
# and spaces) and `.lo<U+200C>cal/` (HFS+ ignores that code point). Checked out on such a laptop, a `git pull` writes
# them into the node's own `.local/`. The checks compared the name with `.local` in any letter case only: the watcher
# examined the tip instead of saying "do not pull", and after the pull `doctor` said "PASS trust root". Expected
# (by the rule, on any OS): the watcher refuses each tip before the pull and every command refuses after it, naming
# the folder. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
bad=""
for dir in 'LOCAL~1' '.local.' $'.lo\u200ccal'; do
  newlab localname; policy; approve >/dev/null
  (cd "$L/main" && mkdir -p "$dir" && echo '{"tx":{"allowed_ranges_hz":[[1e6,6e9]],"max_gain_db":60,"max_duration_s":3600}}' > "$dir/rxnode-policy.json" \
     && G add -A && G commit -qm "lab files" && G push -q origin video-development)
  shown=$(printf '%q' "$dir")
  echo A | rxn watch --once --interval 0.2 > "$L/w.out" 2>&1; rc=$?
  echo "$shown: watch on the tip: rc=$rc $(grep -m1 -o 'tracks [^:]*' "$L/w.out")"
  [ $rc -ne 3 ] && bad="$bad watch-examined-$shown"
  (cd "$L/rx" && G pull -q --ff-only)
  rxn doctor > "$L/d.out" 2>&1; echo "  after the pull: $(grep -m1 -E '^[A-Z]+ +trust root' "$L/d.out" | cut -c1-150)"
  grep -qE '^PASS +trust root' "$L/d.out" && bad="$bad doctor-pass-$shown"
  panics "$L/w.out" "$L/d.out" && bad="$bad panic"
done
[ -n "$bad" ] && { echo "broken: a folder other file systems fold into .local passes the trust root:$bad"; exit 0; }; echo held; exit 1
