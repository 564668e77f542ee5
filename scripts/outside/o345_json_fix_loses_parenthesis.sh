#!/bin/bash
# o345: under --json an error's fix is its own field. A fix that ends with a parenthesis of its own lost the
# closing `)`: `capture -f 10e9 --json` on a 6 GHz radio said `"fix": "pick a setting the radio supports
# (`rxnode inventory --dry-run` lists its ranges"` — a script or a person reads half a sentence. Expected: the
# fix as the text message has it, every `(` closed.
. "$(dirname "$0")/lib.sh"
newlab o345; policy
rxn --sim --json capture -d driver=rxsim -f 10e9 -r 2e6 --duration-s 0.1 --gain-db 10 > $L/j.out 2> $L/j.err; rj=$?
rxn --sim capture -d driver=rxsim -f 10e9 -r 2e6 --duration-s 0.1 --gain-db 10 > $L/t.out 2> $L/t.err; rt=$?
fix=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])["error"]["fix"])' $L/j.err 2>&1)
echo "--json: exit $rj: fix: $fix"
echo "text:   exit $rt: $(grep -a 'fix:' $L/t.err)"
panics $L/j.err $L/t.err && { echo "broken: a panic"; exit 0; }
[ "$rj" = 2 ] && [[ "$fix" == *"inventory --dry-run"* ]] || { echo "cannot play: no fix naming inventory (exit $rj: $(cat $L/j.err))"; exit 2; }
open=$(tr -cd '(' <<< "$fix" | wc -c); close=$(tr -cd ')' <<< "$fix" | wc -c)
[ "$open" = "$close" ] || { echo "broken: the JSON fix has $open '(' and $close ')': \"$fix\""; exit 0; }
grep -aqF -- "fix: $fix" $L/t.err || { echo "broken: the JSON fix is not the text's: \"$fix\""; exit 0; }
echo held; exit 1
