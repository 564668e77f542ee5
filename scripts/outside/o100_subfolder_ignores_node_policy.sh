#!/bin/bash
# o100: the operator reads a task in `docs/handoff/` of the RX checkout and starts a capture from there. rxnode
# looked for `.local/` in that folder, not at the checkout's top: the node's policy (here 50 dB, 10 s) was not
# found and the defaults (the radio's maximum gain, 60 s) let a 60 dB capture run and PASS; `status` showed an
# empty node with exit 0 and `run` called an approved task "unknown to this node", leaving a `docs/.local/`
# ledger that Git sees. Expected: a folder inside the node's checkout is that node.
source "$(dirname "$0")/lib.sh"
newlab o100; policy; rxn node set-name LAB1 >/dev/null
{ hdr T1 YES YES NO; plan '{"op":"rx_capture","device":"driver=rxsim","frequency_hz":100e6,"sample_rate_hz":2e6,"gain_db":20,"duration_s":0.2}'; } | post; approve
mkdir -p "$L/rx/docs/handoff"; cd "$L/rx/docs/handoff"
"$RXN" --sim capture -d driver=rxsim -f 100M -r 2M -t 0.1 -g 60 > cap.out 2>&1; cap=$?
"$RXN" status > status.out 2>&1; st=$?
"$RXN" --sim run T1 > run.out 2>&1; run=$?
echo "capture -g 60 (policy rx.max_gain_db 50): exit $cap: $(grep -E 'status:|error' cap.out | head -1)"
echo "status: exit $st: $(grep -E '^(node|approved):' status.out | tr -s ' ' | tr '\n' ' ')"
echo "run T1: exit $run: $(grep -E 'error|T1:' run.out | head -1)"
echo "git status: $(git -C "$L/rx" status --short | tr '\n' ' ')"
panics cap.out status.out run.out && { echo "broken: a panic"; exit 0; }
[ $cap -eq 0 ] && { echo "broken: a 60 dB capture from docs/handoff/ PASSed past the node's 50 dB policy"; exit 0; }
grep -q 'rx.max_gain_db 50' cap.out || { echo "broken: the capture was not refused by the node's policy"; exit 0; }
grep -q '^approved: *T1' status.out || { echo "broken: status from docs/handoff/ does not show the approved task"; exit 0; }
grep -q 'unknown to this node' run.out && { echo "broken: run from docs/handoff/ calls the approved task unknown"; exit 0; }
[ -e "$L/rx/docs/handoff/.local" ] && { echo "broken: a docs/handoff/.local/ was made"; exit 0; }
echo held; exit 1
