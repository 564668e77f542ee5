#!/bin/bash
# o223: results from an older rxnode: node LAB1's result of CAP_1 in the layout before node names
# (`rx-results/CAP_1/RX_RESULT.*`, as an old `publish` wrote it), then node LAB2, up to date, answers CAP_1 too.
# `results` listed the old result under LAB1 (the node its JSON names), but `results show` called it `(unnamed)`:
# "2 nodes answered CAP_1 ((unnamed), LAB2)"; `--from LAB1` said "no result for CAP_1 from node LAB1" and
# `--from '(unnamed)'` is no node name, so LAB1's result could not be shown, drawn or verified on its own.
# Expected: every view names it LAB1 and `--from LAB1` picks it. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab oldlayout; published CAP_1
(cd "$L/peer" && for f in RX_RESULT.md RX_RESULT.json LOG_META.json; do G mv -k rx-results/CAP_1/LAB1/$f rx-results/CAP_1/$f; done \
  && G commit -q --amend -m "rx-results: CAP_1 from LAB1

Task: CAP_1" && G push -qf origin HEAD:rx-node)
G clone -q -b video-development "$L/origin.git" "$L/rx2" 2>/dev/null; mkdir -p "$L/rx2/.local"
echo "$POL" > "$L/rx2/.local/rxnode-policy.json"; chmod 600 "$L/rx2/.local/rxnode-policy.json"
r2() { "$RXN" --repo "$L/rx2" "$@"; }
r2 node set-name LAB2 >/dev/null; echo A | r2 watch --once --interval 0.2 >/dev/null 2>&1
r2 --sim run CAP_1 >/dev/null 2>&1; echo "PUBLISH CAP_1" | r2 publish CAP_1 --push >/dev/null 2>&1
echo "rx-node: $(git -C "$L/origin.git" ls-tree -r --name-only rx-node | tr '\n' ' ')"
cd "$L/main"
"$RXN" results > "$L/r.out" 2>&1; echo "results: rc=$?"; grep CAP_1 "$L/r.out" | cut -c1-100 | sed 's/^/  /'
"$RXN" results show CAP_1 > "$L/s.out" 2>&1; echo "show: rc=$? $(head -1 "$L/s.out")"
"$RXN" results show CAP_1 --from LAB1 > "$L/s1.out" 2>&1; rc1=$?; echo "show --from LAB1: rc=$rc1 $(head -1 "$L/s1.out")"
"$RXN" --json results verify CAP_1 --from LAB1 > "$L/v1.json" 2>&1; echo "verify --from LAB1: rc=$? $(grep -m1 '"node"' "$L/v1.json")"
bad=""
grep -q '^LAB1 .*CAP_1' "$L/r.out" || bad="$bad not-listed-under-LAB1"
[ "$rc1" = 0 ] && grep -q '^CAP_1 from LAB1' "$L/s1.out" || bad="$bad from-LAB1-unreachable"
grep -q 'unnamed' "$L/s.out" && bad="$bad show-calls-it-unnamed"
grep -q '"node": "LAB1"' "$L/v1.json" || bad="$bad verify-node"
panics "$L/r.out" "$L/s.out" "$L/s1.out" "$L/v1.json" && bad="$bad panic"
[ -n "$bad" ] && { echo "broken: an old-layout result listed under its node cannot be shown or verified by that node's name:$bad"; exit 0; }; echo held; exit 1
