#!/bin/bash
# o64: two `rxnode sweep` at once on two radios, the same `--csv same.csv --plot same.png` (a command line recalled from
# the shell history in a second terminal). Outputs are "never overwritten" without --force, but the check ran at the
# start of each sweep, before either file existed: both sweeps said "wrote CSV: same.csv", and the first one's CSV
# and picture were silently replaced by the second's. Expected: the second write finds the name taken and says so.
source "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o64.XXXXXX); cd "$L"; export RXSIM_EVENT_LOG="$L/events.log"
for s in a b; do
  ( "$RXN" --sim sweep -d driver=rxsim,serial=o64$s,pace=1 --start-hz 100M --stop-hz 108M --bin-hz 10k \
      --csv same.csv --plot same.png > sw_$s.out 2>&1; echo "rc=$?" >> sw_$s.out ) &
done; wait
for s in a b; do echo "sweep $s: $(grep -E 'wrote CSV|rc=|error' sw_$s.out | tr '\n' ' ' | cut -c1-220)"; done
panics sw_a.out sw_b.out && { echo "broken: a panic"; exit 0; }
n=$(cat sw_a.out sw_b.out | grep -c 'wrote CSV: same.csv')
[ "$n" -ge 2 ] && { echo "broken: both sweeps say they wrote same.csv; one sweep's CSV was replaced without --force"; exit 0; }
[ "$n" -eq 0 ] && { echo "cannot play: neither sweep wrote its CSV"; exit 2; }
echo held; exit 1
