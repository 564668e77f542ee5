#!/bin/bash
# o103: on the main PC, `rxnode task new` and `rxnode results` started from `docs/` of the clone (where the task file
# lives) said ". is not a Git repository (run … in a clone of the project)": false, the folder is inside one. On the
# RX laptop, from `docs/` of a fresh clone, `node set-name` and `watch` said ". is not a Git checkout", with no word
# of the checkout it is in. Expected: the main PC's commands work from any folder of the clone (as Git does); a
# node command that needs the checkout's top names it and the fix.
source "$(dirname "$0")/lib.sh"
newlab o103; mkdir -p "$L/main/docs" "$L/rx/docs"; cd "$L/main/docs"
"$RXN" task new --id SUB_1 --title "from docs" > task.out 2>&1; tn=$?
"$RXN" results > results.out 2>&1; rs=$?
(cd "$L/rx/docs" && "$RXN" node set-name LAB1) > "$L/name.out" 2>&1; nm=$?
echo "task new from main/docs: exit $tn: $(head -1 task.out)"
echo "results from main/docs: exit $rs: $(head -1 results.out)"
echo "node set-name from rx/docs: exit $nm: $(head -1 "$L/name.out")"
panics task.out results.out "$L/name.out" && { echo "broken: a panic"; exit 0; }
grep -q 'not a Git repository' task.out results.out && { echo "broken: a folder of the main PC's clone is called no Git repository"; exit 0; }
[ $tn -eq 0 ] && grep -q 'TASK_ID = SUB_1' "$L/main/docs/handoff/NEXT_RX_TASK.md" 2>/dev/null || { echo "broken: task new from docs/ did not write the clone's task file"; exit 0; }
grep -q 'not a Git checkout' "$L/name.out" && { echo "broken: a folder of the RX clone is called no Git checkout"; exit 0; }
grep -q "inside the Git checkout $L/rx" "$L/name.out" || { echo "broken: node set-name from rx/docs does not name the checkout's top"; exit 0; }
echo held; exit 1
