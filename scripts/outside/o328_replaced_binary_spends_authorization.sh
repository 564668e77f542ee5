#!/bin/bash
# o328: the binary of a running `rxnode run` replaced on disk (an upgrade: the new file renamed over
# the old) between the `AUTHORIZE RF TX` prompt and the key-up. The TX guard must be the code that
# is running, not whatever the path names now: a guard started from the path fails to start (or is
# another program), the step FAILs with nothing keyed, and the operator's one authorization is
# spent on nothing — the task is completed and can never be run again. The radio's own log (rxsim)
# is the witness of what was keyed.
source "$(dirname "$0")/lib.sh"
newlab o328; policy
mkdir -p $L/bin; cp "$RXN" $L/bin/rxnode
{ hdr SWAP YES NO YES; plan '{"op":"tx_tone","device":"driver=rxsim,serial=o328-'$$'","frequency_hz":433.92e6,"sample_rate_hz":2e6,"tone_offset_hz":5e4,"gain_db":0,"duration_s":0.3}'; } | post; approve
mkfifo $L/in
( exec 3>$L/in
  for _ in $(seq 300); do grep -q 'Type exactly' $L/run.out 2>/dev/null && break; sleep 0.05; done
  # the upgrade: a new file (here a program that is not rxnode at all) renamed over the running binary
  printf '#!/bin/sh\necho "not the running rxnode: $*" >&2; touch %s/new-ran\nexit 9\n' "$L" > $L/bin/rxnode.new; chmod 755 $L/bin/rxnode.new
  mv -f $L/bin/rxnode.new $L/bin/rxnode
  echo 'AUTHORIZE RF TX' >&3 ) &
"$L/bin/rxnode" --repo "$L/rx" --sim run SWAP < $L/in > $L/run.out 2>&1; rc=$?; wait
echo "run rc=$rc; $(grep -m1 -io 'not the running rxnode[^;]*\|tx-guard: [^;]*' $L/run.out | head -1)"
n=$(txlines); echo "TX lines in the radio's log: $n (activateStream TX: $(grep -c ' activateStream TX' $RXSIM_EVENT_LOG))"
state=$(rxn status 2>&1 | grep -m1 -i 'SWAP' | head -1); echo "status: $state"
again=$(echo 'AUTHORIZE RF TX' | rxn --sim run SWAP 2>&1 | tail -1); echo "run again: $again"
[ -e $L/new-ran ] && { echo "broken: the file now at the binary's path ran as the TX guard"; exit 0; }
panics $L/run.out && { echo "broken: a panic with the binary replaced"; exit 0; }
grep -q ' activateStream TX' $RXSIM_EVENT_LOG || { echo "broken: the binary replaced after the prompt: nothing keyed (run rc=$rc, $n TX lines) and the authorization was spent"; exit 0; }
echo held; exit 1
