#!/bin/bash
# o346: the operator closes the terminal `rxnode run R1` was started in while it captures (SIGHUP). The run stops
# the capture and writes a PARTIAL result, whose note said `interrupted by the operator (Ctrl-C / SIGTERM)`: the
# operator typed no Ctrl-C and sent no SIGTERM, and the published result misnames what stopped it. Expected: the
# note names the terminal closing (SIGHUP) among the signals that stop a run.
. "$(dirname "$0")/lib.sh"
newlab o346; policy; rxn node set-name LAB1 >/dev/null
{ hdr R1 YES YES NO; plan '{"op":"rx_capture","device":"driver=rxsim","frequency_hz":100e6,"sample_rate_hz":250e3,"gain_db":20,"duration_s":8}'; } | post; approve
"$RXN" --repo "$L/rx" --sim run R1 > $L/r.out 2>&1 & pid=$!
for _ in $(seq 200); do grep -q 'activateStream RX' "$RXSIM_EVENT_LOG" && break; sleep 0.1; done
sleep 0.5; kill -HUP $pid; wait $pid; rc=$?
R=$L/rx/.local/rx_agent_outbox/R1/RX_RESULT.json
note=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["status"], "|", "; ".join(e for e in d["errors"] if "interrupt" in e))' $R 2>&1)
echo "run after SIGHUP: exit $rc; result: $note"
panics $L/r.out && { echo "broken: a panic"; exit 0; }
[[ "$note" == PARTIAL* ]] || { echo "cannot play: the run was not stopped mid-capture (exit $rc, $note)"; exit 2; }
[[ "$note" == *SIGHUP* ]] || { echo "broken: the result of a run whose terminal closed says: ${note#*| }"; exit 0; }
echo held; exit 1
