#!/bin/bash
# o200: `rxnode run` and its TX guard stopped together (SIGSTOP to the process group: `kill -STOP -PGID`,
# `pkill -STOP rxnode`) while the tone is keyed: each process's bound on the other is code in
# the other, so with both stopped nothing runs and the transmitter stays keyed for as long as the stop lasts.
# docs/safety.md bounds "keyed" by permit + 0.5 s whatever happens to run or the guard. Here a 1 s tone is
# stopped 0.3 s in, held 3 s, then continued; the radio's own log (rxsim) says how long the stream was active.
source "$(dirname "$0")/lib.sh"
newlab o200; policy
{ hdr STOP2 YES NO YES; plan '{"op":"tx_tone","device":"driver=rxsim,serial=tx","frequency_hz":433.92e6,"sample_rate_hz":2e6,"tone_offset_hz":5e4,"gain_db":0,"duration_s":1}'; } | post; approve
mkfifo $L/in; ( setsid "$RXN" --repo $L/rx --sim run STOP2 < $L/in > $L/run.out 2>&1; echo $? > $L/rc ) &
exec 3>$L/in; sleep 0.3; RP=$(pgrep -f "$L/rx --sim run STOP2" | head -1); echo 'AUTHORIZE RF TX' >&3
for i in $(seq 500); do grep -q ' activateStream TX' $RXSIM_EVENT_LOG && break; sleep 0.01; done
sleep 0.3; GP=$(pgrep -P $RP | head -1); kill -STOP -- -$RP; sleep 3
echo "while stopped: run (pid $RP) $(ps -o stat= -p $RP), guard (pid $GP) $(ps -o stat= -p $GP 2>/dev/null || echo gone)"
kill -CONT -- -$RP 2>/dev/null; exec 3>&-; wait; echo "run rc=$(cat $L/rc)"
grep ' TX ' $RXSIM_EVENT_LOG | cut -c1-100
keyed=$(awk '/ activateStream TX/{a=$1} / (deactivateStream|exitWhileActive) TX/{if(a!=""&&o==""){o=$1}} END{if(o=="")print 999; else printf "%.2f", o-a}' $RXSIM_EVENT_LOG)
echo "TX stream active for $keyed s by the radio's own log (permit 1 s; bound permit + 0.5 s)"
python3 -c "import sys; sys.exit(0 if $keyed > 1.5 else 1)" && { echo "broken: the transmitter stayed keyed $keyed s while run and its guard were stopped together"; exit 0; }
echo held; exit 1
