#!/bin/bash
# o262: node LAB1 answered CAP_1 in the layout before node folders (`rx-results/CAP_1/RX_RESULT.*`, as an old
# `publish` wrote it) and, after its upgrade, again in its folder (`rx-results/CAP_1/LAB1/`). Both are named LAB1:
# `results show CAP_1` said "2 nodes answered CAP_1 (LAB1, LAB1); pick one with --from NODE", and `--from LAB1`
# picked both and said the same, so neither result could be shown, drawn or verified on its own.
# Expected: the two are named with their folders and `--from FOLDER` picks each. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab bothlayouts; published CAP_1
(cd "$L/peer" && keep=$(G rev-parse HEAD) && msg=$(G log -1 --format=%B) \
  && for f in RX_RESULT.md RX_RESULT.json LOG_META.json; do G mv -k rx-results/CAP_1/LAB1/$f rx-results/CAP_1/$f; done \
  && G commit -q --amend -m "rx-results: CAP_1 from LAB1

Task: CAP_1" && G checkout -q "$keep" -- rx-results/CAP_1/LAB1 && G commit -q -m "$msg" && G push -qf origin HEAD:rx-node)
echo "rx-node: $(git -C "$L/origin.git" ls-tree -r --name-only rx-node | tr '\n' ' ')"
cd "$L/main"
"$RXN" results show CAP_1 > "$L/s.out" 2>&1; echo "show: rc=$? $(head -1 "$L/s.out")"
"$RXN" results show CAP_1 --from LAB1 > "$L/s1.out" 2>&1; echo "show --from LAB1: rc=$? $(head -1 "$L/s1.out")"
ok=0
for d in rx-results/CAP_1 rx-results/CAP_1/LAB1; do
  "$RXN" results show CAP_1 --from "$d" > "$L/d.out" 2>&1; rc=$?; echo "show --from $d: rc=$rc $(head -1 "$L/d.out")"
  "$RXN" --json results verify CAP_1 --from "$d" > "$L/v.json" 2>&1; vrc=$?; echo "verify --from $d: rc=$vrc"
  [ "$rc" = 0 ] && grep -q '^CAP_1 from LAB1' "$L/d.out" && [ "$vrc" = 0 ] && grep -q "\"path\": \"$d\"" "$L/v.json" && ok=$((ok+1))
  panics "$L/d.out" "$L/v.json" && ok=-9
done
bad=""
[ "$ok" = 2 ] || bad="$bad folders-not-pickable($ok/2)"
grep -q 'LAB1 (rx-results/CAP_1)' "$L/s.out" || bad="$bad not-told-apart"
panics "$L/s.out" "$L/s1.out" && bad="$bad panic"
[ -n "$bad" ] && { echo "broken: one node's results in both layouts cannot be told apart or picked:$bad"; exit 0; }; echo held; exit 1
