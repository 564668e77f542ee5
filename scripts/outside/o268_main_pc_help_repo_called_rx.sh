#!/bin/bash
# o268: a new user on the main PC reads `rxnode results --help` and `rxnode task new --help`: `--repo` said
# "The RX checkout (a Git work tree)", though these commands read the main PC's clone (`--repo main results`
# works, and is what the guide shows); nothing told the main PC's user that --repo is their own clone.
# Expected: the --repo line names both: the RX clone on a node, the main PC's clone for `results` and `task new`.
# Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab o268; cd "$L/main"
bad=""
for c in "results --help" "task new --help"; do
  "$RXN" $c > $L/help.out 2>&1; rc=$?; line=$(grep -a -- '^ *--repo' $L/help.out)
  echo "rxnode $c: rc=$rc: $line"
  case "$line" in *"the main PC's clone for \`results\` and \`task new\`"*) ;; *) bad="$bad $c;";; esac
done
"$RXN" --repo "$L/main" results > $L/res.out 2>&1; echo "rxnode --repo MAIN results: rc=$? ($(head -1 $L/res.out | cut -c1-100))"
[ -n "$bad" ] && { echo "broken: --repo in the main PC's help calls the main PC's clone the RX checkout:$bad"; exit 0; }
echo held; exit 1
