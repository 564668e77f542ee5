#!/bin/bash
# o265: the radio lock folder was the login session's (`$XDG_RUNTIME_DIR`, else `/run/user/<uid>`). A capture started
# from a login session and one from a shell without that variable (a watcher left in tmux after logout, cron, `su`)
# locked one radio in two folders: the second opened the radio while the first was streaming from it (rxsim's log:
# two `activateStream RX` of one radio overlapping), and passed.
# Expected: one radio is one lock whatever the session: the second capture waits, then is refused naming the first.
# Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab o265; unset RXNODE_RADIO_LOCK_DIR; D=$(mktemp -d /tmp/o265.session.XXXXXX)
DEV="driver=rxsim,serial=o265s$$"
(cd "$L" && XDG_RUNTIME_DIR=$D "$RXN" --sim capture -d "$DEV" -f 100e6 -r 2e6 -t 5 > "$L/a.out" 2>&1) &
for _ in $(seq 100); do grep -q ' activateStream RX' "$RXSIM_EVENT_LOG" && break; sleep 0.05; done
(cd "$L" && env -u XDG_RUNTIME_DIR "$RXN" --sim capture -d "$DEV" -f 100e6 -r 2e6 -t 0.3 > "$L/b.out" 2>&1); rc=$?
wait
acts=$(grep -c ' activateStream RX' "$RXSIM_EVENT_LOG")
echo "second capture (no XDG_RUNTIME_DIR): rc=$rc $(grep -m1 -iE 'status|in use' "$L/b.out")"
echo "rxsim: $acts activateStream RX"
bad=""
[ "$acts" -gt 1 ] && bad="$bad opened-twice($acts)"
[ "$rc" = 0 ] && bad="$bad second-capture-passed"
panics "$L/a.out" "$L/b.out" && bad="$bad panic"
[ -n "$bad" ] && { echo "broken: one radio was locked in two folders by two login sessions of one user:$bad"; exit 0; }; echo held; exit 1
