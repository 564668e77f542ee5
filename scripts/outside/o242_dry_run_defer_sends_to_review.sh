#!/bin/bash
# o242: a new user rehearses a task with `rxnode watch --dry-run --task-file draft.md` and answers D. It says
# "deferred ID; not prompted again until `rxnode review ID`"; they type that and get "task ID is not known on this
# node" (exit 2): the dry run deferred it only under .local/dry-run. Expected: the defer line of a dry run says where
# the deferral lives and how to rehearse it again, never the review that cannot find it. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab o242; cd "$L"
{ hdr O242 YES YES NO; plan '{"op":"rx_capture","device":"driver=rxsim","frequency_hz":100e6,"sample_rate_hz":2e6,"gain_db":20,"duration_s":0.2}'; } > draft.md
echo D | rxn watch --dry-run --task-file "$L/draft.md" > a.txt 2>&1; echo "watch --dry-run, D: rc=$? $(grep -i deferred a.txt)"
rxn review O242 > b.txt 2>&1; rc=$?; echo "review O242: rc=$rc $(head -c 200 b.txt)"
panics a.txt b.txt && { echo "broken: panic"; exit 0; }
grep -q 'deferred' a.txt || { echo "broken: the dry run did not defer"; exit 0; }
grep -q 'until `rxnode review O242`' a.txt && [ $rc != 0 ] && { echo "broken: the dry run sends the operator to a review that answers exit $rc"; exit 0; }
grep -q 'dry-run' <(grep -i deferred a.txt) || { echo "broken: the defer line does not say where it is kept"; exit 0; }
echo held; exit 1
