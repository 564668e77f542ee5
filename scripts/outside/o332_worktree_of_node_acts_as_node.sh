#!/bin/bash
# o332: the operator makes a `git worktree` of the RX checkout to look at another branch and starts rxnode there.
# Each work tree has its own `.local/`: the worktree's is empty. `node show` said "this node has no name; set one
# with `rxnode node set-name NAME`" (doing so made a second node in the same repository) and `watch` ran as a
# second node with no policy and no state, prompting the node's deferred task again. Expected: in a linked worktree
# of a node, `watch` and `node set-name` refuse (exit 3) and write no `.local/`, and every message names the node's
# checkout as the fix.
. "$(dirname "$0")/lib.sh"
newlab o332; policy; rxn node set-name LAB1 >/dev/null
{ hdr T1 NO NO NO; printf '\n# manual\n\nturn the knob\n'; } | post
echo D | rxn watch --once --interval 0.2 > $L/w.out 2>&1
git -C "$L/rx" worktree add -q -b try "$L/try" 2>/dev/null || { echo "cannot play: git worktree add failed"; exit 2; }
W() { "$RXN" --repo "$L/try" "$@"; }
W node show > $L/show.out 2>&1; rsh=$?
echo A | W watch --once --interval 0.2 > $L/ww.out 2>&1; rw=$?
W node set-name LAB2 > $L/name.out 2>&1; rn=$?
echo "node show: rc=$rsh: $(head -c 300 $L/show.out)"
echo "watch: rc=$rw: $(grep -a -m2 -E 'prompt|T1|error' $L/ww.out | head -c 300)"
echo "set-name: rc=$rn: $(head -c 300 $L/name.out)"
echo "worktree .local/: $(ls -A $L/try/.local 2>/dev/null | tr '\n' ' ')"
panics $L/show.out $L/ww.out $L/name.out && { echo "broken: a panic"; exit 0; }
grep -aq 'Stop watcher' $L/w.out || { echo "cannot play: the node's watcher did not prompt"; exit 2; }
bad=""
grep -aq "$L/rx" $L/show.out || bad="$bad node show does not name the node's checkout;"
[ "$rw" = 3 ] || bad="$bad watch in the worktree exited $rw, not 3;"
grep -aq 'Stop watcher' $L/ww.out && bad="$bad watch in the worktree prompted the node's task again;"
grep -aq "run rxnode in $L/rx" $L/ww.out || bad="$bad watch does not name the node's checkout as the fix;"
[ "$rn" = 3 ] || bad="$bad node set-name in the worktree exited $rn, not 3;"
[ -e "$L/try/.local" ] && bad="$bad the worktree got a .local/ of its own;"
[ -n "$bad" ] && { echo "broken:$bad"; exit 0; }; echo held; exit 1
