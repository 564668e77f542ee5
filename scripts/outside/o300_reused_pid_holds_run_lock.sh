#!/bin/bash
# o300: `rxnode run T1` is killed (SIGKILL, a crash, power loss) while capturing; the kernel then gives its PID to
# another process (the PID space wraps at /proc/sys/kernel/pid_max, 32768 here; after a reboot PIDs start again).
# The run lock's PID was judged alive: status said "run T1 in progress", the interrupted run was never finished,
# publish refused T1 ("is being run now") and no run of any task could start while that unrelated process lived.
# Expected: a PID that now names another process is not the holder: the lock is taken over with a warning and the
# run is finished as INTERRUPTED. Needs root (/proc/sys/kernel/ns_last_pid places the new process on the old PID).
source "$(dirname "$0")/lib.sh"
[ -w /proc/sys/kernel/ns_last_pid ] || { echo "cannot play: /proc/sys/kernel/ns_last_pid is not writable (root on Linux)"; exit 2; }
newlab o300; policy; rxn node set-name LAB1 >/dev/null
cap='{"op":"rx_capture","device":"driver=rxsim,pace=1,serial=o300","frequency_hz":100e6,"sample_rate_hz":1e6,"gain_db":20,"duration_s":4}'
{ hdr T1 YES YES NO; plan "$cap"; } | post; approve
"$RXN" --repo "$L/rx" --sim run T1 > $L/run.out 2>&1 & P=$!
for i in $(seq 100); do grep -q 'activateStream RX' "$RXSIM_EVENT_LOG" && break; sleep 0.1; done
kill -9 $P; wait $P 2>/dev/null
S=""; for i in 1 2 3 4 5; do echo $((P - 1)) > /proc/sys/kernel/ns_last_pid; sleep 60 & S=$!; [ "$S" = "$P" ] && break; kill $S; S=""; done
sleep 0.2; [ -n "$S" ] || { echo "cannot play: PID $P could not be given to a new process"; exit 2; }
echo "run T1 (PID $P) killed while capturing; PID $S now: $(tr '\0' ' ' < /proc/$S/cmdline)"
rxn status > $L/st.out 2>&1; echo "status: $(grep -a 'INTERRUPTED\|^run:' $L/st.out | cut -c1-200 | tr '\n' ' ')"
echo "PUBLISH T1" | rxn publish T1 > $L/pub.out 2>&1; echo "publish T1 (local): rc=$? $(grep -a "^published\|error" $L/pub.out | head -1 | cut -c1-200)"
{ hdr T2 YES YES NO; plan "$cap"; } | post; approve
rxn --sim run T2 > $L/run2.out 2>&1; r2=$?; echo "run T2: rc=$r2 $(grep -a 'error\|warning\|^T2:' $L/run2.out | head -2 | cut -c1-220 | tr '\n' ' ')"
res=$(python3 -c "import json; print(json.load(open('$L/rx/.local/rx_agent_outbox/T1/RX_RESULT.json'))['status'])" 2>/dev/null)
echo "T1's result in the outbox: ${res:-none}"
kill $S 2>/dev/null
panics $L/*.out && { echo "broken: a panic"; exit 0; }
bad=""
grep -aq '^run: *run T1 in progress' $L/st.out && bad="$bad status says run T1 is in progress (PID $P now names 'sleep');"
grep -aq 'INTERRUPTED' $L/st.out || bad="$bad the killed run was not finished as INTERRUPTED;"
grep -aq 'is being run now' $L/pub.out && bad="$bad publish refused T1 as being run now;"
[ "$r2" = 0 ] || bad="$bad run T2 did not run (rc=$r2);"
[ "$res" = FAIL ] || bad="$bad T1's result is '${res:-none}', not FAIL (INTERRUPTED);"
[ -n "$bad" ] && { echo "broken:$bad"; exit 0; }; echo held; exit 1
