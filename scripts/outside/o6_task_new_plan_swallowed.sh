#!/bin/bash
# o6: main PC, lost plan: `rxnode task new --rx --plan plan.json --body notes.md` where the notes end inside an open code
# fence (a body of one line "```") writes a task whose rx-plan block sits inside the body's code block: the node parses it
# as a manual task. task new still says "valid", exit 0, and prints the git commands to post it; the plan given with
# --plan is in the file but never runs (the node shows "manual task"). Expected: refused (exit 2) naming the body's open
# fence, or at least an error because the written file has no plan although --plan was given. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab tnfence; cd "$L/main"
printf '%s' '{"steps":[{"op":"rx_capture","device":"driver=rxsim","frequency_hz":100e6,"sample_rate_hz":2e6,"gain_db":20,"duration_s":0.2}]}' > "$L/plan.json"
printf '```\n' > "$L/notes.md"
"$RXN" task new --id FENCE1 --title t --rx --plan "$L/plan.json" --body "$L/notes.md" --out "$L/task.md" > "$L/tn.out" 2>&1; rc=$?
echo "task new rc=$rc: $(head -1 "$L/tn.out"); $(grep 'plan:' "$L/tn.out" | sed 's/  */ /g')"
grep -c '"op":"rx_capture"' "$L/task.md" | sed 's/^/rx_capture in the written file: /'
"$RXN" validate "$L/task.md" 2>&1 | grep 'plan:' | sed 's/  */ /g; s/^/node-side validate:/'
[ $rc -eq 0 ] && "$RXN" validate "$L/task.md" 2>&1 | grep -q 'manual task' && { echo "broken: --plan given, task new exit 0 'valid', the node sees a manual task (plan swallowed by the body's open fence)"; exit 0; }; echo held; exit 1
