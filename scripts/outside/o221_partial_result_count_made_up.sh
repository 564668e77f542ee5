#!/bin/bash
# o221: a result that reached rx-node in part (RX_RESULT.json alone: a node stopped mid-publish, a copy pushed by
# hand) read on the main PC. `results` flagged its row "does not validate (1 problem(s))" though no validator ran
# (the count was made up when a file could not be read) and `results verify` named 5 problems; for a result whose
# files disagree the listing's count (the validator's) was not the count `results show` and `verify` gave either.
# Expected: the row names what is wrong (RX_RESULT.md is missing) and no count. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab partial; published CAP_1
(cd "$L/peer" && mkdir -p rx-results/CAP_2/LAB1 && sed 's/CAP_1/CAP_2/' rx-results/CAP_1/LAB1/RX_RESULT.json > rx-results/CAP_2/LAB1/RX_RESULT.json \
  && G add -A && G commit -qm "rx-results: CAP_2 (PASS) from LAB1" && G push -q origin HEAD:rx-node)
echo "rx-node holds: $(git -C "$L/origin.git" ls-tree -r --name-only rx-node rx-results/CAP_2 | tr '\n' ' ')"
(cd "$L/main" && "$RXN" results > "$L/r.out" 2> "$L/r.err"; echo "results: rc=$?"; "$RXN" --json results > "$L/r.json" 2>>"$L/r.err"
 "$RXN" results verify CAP_2 > "$L/v.out" 2>&1; echo "verify: rc=$? $(grep -c '^  - ' "$L/v.out") problem(s) named")
grep -A1 CAP_2 "$L/r.out" | cut -c1-200 | sed 's/^/  /'
row=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print([r['problems'] for r in d['results'] if r['task_id']=='CAP_2'])" "$L/r.json")
echo "JSON row problems: $row"
bad=""
case "$row" in *"problem(s)"*) bad="$bad count-in-row";; esac
case "$row" in *"RX_RESULT.md is missing"*) ;; *) bad="$bad missing-file-not-named";; esac
panics "$L/r.out" "$L/r.err" "$L/v.out" && bad="$bad panic"
[ -n "$bad" ] && { echo "broken: a partly published result is listed with a made-up problem count instead of what is wrong:$bad"; exit 0; }; echo held; exit 1
