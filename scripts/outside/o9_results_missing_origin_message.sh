#!/bin/bash
# o9: unclear error: on the main PC, when origin is a local path that no longer exists (a moved or unmounted share),
# `rxnode results` and `results nodes` say "fetch of rx-node from /…/origin.git failed: unsupported URL protocol"
# (libgit2's words for a path it cannot open) while the node's `watch` says it rightly: "the remote's path … does not
# exist". Expected: the same plain cause on the main PC. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab noorigin; policy; mv "$L/origin.git" "$L/moved.git"
rxn watch --once --interval 0.2 </dev/null > "$L/w.out" 2>&1; echo "watch rc=$?: $(tail -1 "$L/w.out")"
cd "$L/main"; "$RXN" --repo "$L/main" results > "$L/r.out" 2>&1; rc=$?; echo "results rc=$rc: $(tail -1 "$L/r.out")"
"$RXN" --repo "$L/main" results nodes 2>&1 | tail -1 | sed 's/^/results nodes: /'
grep -q 'unsupported URL protocol' "$L/r.out" && { echo "broken: a missing local origin is reported as 'unsupported URL protocol'"; exit 0; }; echo held; exit 1
