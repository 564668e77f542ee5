#!/bin/bash
# o229: a result that reached rx-node in part (RX_RESULT.json alone: a node stopped mid-publish, a copy pushed by
# hand), read on the main PC. `results` listed it and `results show --plot` drew its pictures, but `results show`
# and even `results show --json` — which prints only the JSON, which is there — failed with exit 1
# ("RX_RESULT.md is missing"), the exit status of a network or Git error. Expected: `--json` prints the JSON and the
# text shows the verdict line, the problems and why there is no Markdown (exit 0). Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab partialshow; published CAP_1
(cd "$L/peer" && mkdir -p rx-results/CAP_2/LAB1 && sed 's/CAP_1/CAP_2/' rx-results/CAP_1/LAB1/RX_RESULT.json > rx-results/CAP_2/LAB1/RX_RESULT.json \
  && G add -A && G commit -qm "rx-results: CAP_2 (PASS) from LAB1" && G push -q origin HEAD:rx-node)
echo "rx-node holds: $(git -C "$L/origin.git" ls-tree -r --name-only rx-node rx-results/CAP_2 | tr '\n' ' ')"
cd "$L/main"
"$RXN" results > "$L/r.out" 2>&1; echo "results: rc=$? $(grep -c CAP_2 "$L/r.out") row(s) of CAP_2"
"$RXN" --json results show CAP_2 > "$L/j.out" 2> "$L/j.err"; rcj=$?; echo "show --json: rc=$rcj $(head -c 150 "$L/j.err")"
"$RXN" results show CAP_2 > "$L/s.out" 2> "$L/s.err"; rcs=$?; echo "show: rc=$rcs $(head -c 150 "$L/s.err")"; head -4 "$L/s.out" | cut -c1-160 | sed 's/^/  /'
id=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1])).get('task_id'))" "$L/j.out" 2>/dev/null)
bad=""
[ "$rcj" = 0 ] && [ "$id" = CAP_2 ] || bad="$bad json-view-lost(rc=$rcj)"
[ "$rcs" = 0 ] && grep -q '^CAP_2 from LAB1' "$L/s.out" && grep -q 'RX_RESULT.md is missing' "$L/s.out" || bad="$bad text-view-lost(rc=$rcs)"
panics "$L/j.err" "$L/s.err" && bad="$bad panic"
[ -n "$bad" ] && { echo "broken: a result that landed in part is listed but cannot be shown:$bad"; exit 0; }; echo held; exit 1
