#!/bin/bash
# o334: a new user reads "rxnode run <TASK_ID>" and runs it before any watcher has seen the task. rxnode said
# `task T1 is not approved: it is unknown to this node` (exit 3) and nothing more: no word of `rxnode watch`, which
# fetches the task and asks for approval; under --json `"fix": null`. A pending task said `nobody approved it`, with no
# fix either. Expected: each names its fix (`rxnode watch`; A at the watcher's prompt or `rxnode review T1`).
. "$(dirname "$0")/lib.sh"
newlab o334; policy; rxn node set-name LAB1 >/dev/null
{ hdr T1 NO NO NO; printf '\n# manual\n\nturn the knob\n'; } | post
rxn --sim run T1 > $L/u.out 2>&1; ru=$?
rxn --json --sim run T1 > $L/uj.out 2>&1
echo S | rxn watch --once --interval 0.2 > $L/w.out 2>&1
rxn --sim run T1 > $L/p.out 2>&1; rp=$?
echo "run before watch: rc=$ru: $(cat $L/u.out)"
echo "--json: $(cat $L/uj.out)"
echo "run of a pending task: rc=$rp: $(cat $L/p.out)"
panics $L/u.out $L/p.out && { echo "broken: a panic"; exit 0; }
bad=""
[ "$ru" = 3 ] && [ "$rp" = 3 ] || bad="$bad run exited $ru / $rp, not 3;"
grep -aq 'fix: `rxnode watch`' $L/u.out || bad="$bad run before watch does not name \`rxnode watch\` as the fix;"
grep -aq '"fix":null' $L/uj.out && bad="$bad --json says \"fix\": null;"
grep -aq 'rxnode review T1' $L/p.out || bad="$bad run of a pending task does not name \`rxnode review T1\`;"
[ -n "$bad" ] && { echo "broken:$bad"; exit 0; }; echo held; exit 1
