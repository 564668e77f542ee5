#!/bin/bash
# o392: the node's trust root at modes any user of the machine may write: .local/ at 777, the ledger at 666, the
# state at 666, <git dir>/rxnode/ (the node key's folder) at 777. status, watch --once and node show used them
# without a word (exit 0): another local user could edit the state and the ledger (take a finished run off the
# record) or take the node key away.
# Expected: each refused (exit 3) naming the path and `chmod o-w`; a group-writable one (umask 002) still works.
source "$(dirname "$0")/lib.sh"
newlab o392; policy; rxn node set-name LAB1 >/dev/null
{ hdr M1 NO NO NO; printf '\n# manual\n\nCheck the antenna cable by hand.\n'; } | post; approve
bad=""
for c in ".local 777 755 status" ".local/rx_agent_ledger.jsonl 666 644 status" ".local/rx_agent_state.json 666 644 status" \
         ".git/rxnode 777 700 node-show" ".local 777 755 watch"; do
  set -- $c; p=$L/rx/$1; chmod $2 $p
  case $4 in status) args="status";; node-show) args="node show";; watch) args="watch --once --interval 0.2";; esac
  rxn $args </dev/null > $L/o.out 2> $L/o.err; rc=$?
  echo "$1 at $2, rxnode $args: exit $rc: $(grep -a 'writable\|error' $L/o.err | head -1 | cut -c1-200)"
  [ $rc = 3 ] && grep -aqF "$p" $L/o.err && grep -aq 'chmod o-w' $L/o.err || bad="$bad $1 at mode $2 was used by rxnode $args (exit $rc);"
  chmod $3 $p; chmod g+w $p
  rxn $args </dev/null > $L/g.out 2> $L/g.err; rc=$?
  [ $rc = 0 ] || bad="$bad $1 group-writable refused by rxnode $args (exit $rc);"
  chmod $3 $p
  panics $L/o.out $L/o.err $L/g.out $L/g.err && bad="$bad a panic;"
done
[ -n "$bad" ] && { echo "broken:$bad"; exit 0; }; echo held; exit 1
