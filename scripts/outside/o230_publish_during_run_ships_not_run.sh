#!/bin/bash
# o230: the operator types `rxnode publish T1 --push` in a second terminal while `rxnode run T1` is still capturing.
# publish shipped the approval's placeholder ("T1 (NOT RUN)", "not started") to origin; the run then PASSed, and
# every later publish was refused ("a result is never overwritten"): the main PC holds NOT RUN for a task that ran.
# The same after a publish typed before the run: the run went ahead, on the radio, with a result that could never
# go out. Expected: publish refuses while the task's run holds the run lock (then publishes the PASS), and run
# refuses a task whose result was already published.
source "$(dirname "$0")/lib.sh"
newlab o230; policy; rxn node set-name LAB1 >/dev/null
cap='{"op":"rx_capture","device":"driver=rxsim,pace=1,serial=o230","frequency_hz":100e6,"sample_rate_hz":1e6,"gain_db":20,"duration_s":4}'
{ hdr T1 YES YES NO; plan "$cap"; } | post; approve
"$RXN" --repo "$L/rx" --sim run T1 > $L/run.out 2>&1 & P=$!
for i in $(seq 100); do grep -q 'activateStream RX' "$RXSIM_EVENT_LOG" && break; sleep 0.1; done
echo "PUBLISH T1" | rxn publish T1 --push > $L/p1.out 2>&1; p1=$?; wait $P; r=$?
echo "publish during the run: rc=$p1 $(grep -a 'error\|published' $L/p1.out | head -2 | cut -c1-220 | tr '\n' ' ')"
echo "run: rc=$r $(grep -a '^T1:' $L/run.out)"
echo "PUBLISH T1" | rxn publish T1 --push > $L/p2.out 2>&1; p2=$?
echo "publish after the run: rc=$p2 $(grep -a 'error\|published' $L/p2.out | head -1 | cut -c1-200)"
sent=$(git -C $L/origin.git log --format=%s rx-node 2>/dev/null | tr '\n' ' '); echo "origin rx-node: $sent"
{ hdr T2 YES YES NO; plan "$cap"; } | post; approve; : > "$RXSIM_EVENT_LOG"
echo "PUBLISH T2" | rxn publish T2 > $L/p3.out 2>&1
rxn --sim run T2 > $L/run2.out 2>&1; r2=$?; rx=$(grep -c 'activateStream RX' "$RXSIM_EVENT_LOG")
echo "run after T2's publish: rc=$r2, RX streams: $rx; $(grep -a 'error' $L/run2.out | cut -c1-200)"
panics $L/*.out && { echo "broken: a panic"; exit 0; }
grep -aq 'T1: PASS' $L/run.out || { echo "cannot play: the run did not PASS"; exit 2; }
bad=""
[[ "$sent" == *"T1 (NOT RUN)"* ]] && bad="$bad publish sent 'T1 (NOT RUN)' while the run was capturing (it PASSed);"
[[ "$sent" == *"T1 (PASS)"* ]] || bad="$bad the PASS result of T1 never reached origin;"
[ "$rx" -gt 0 ] && bad="$bad run T2 opened the radio after T2's result was published;"
[ -n "$bad" ] && { echo "broken:$bad"; exit 0; }; echo held; exit 1
