#!/bin/bash
# o22: a number absent without its reason: a sweep without a noise floor (here a radio delivering zeros; a noiseless
# tone or every hop failing do the same) is shown in its RX_RESULT.md, and so in the main PC's `results show`, as
# "| Noise floor | n/a |", while a capture of the same radio says "Noise floor: n/a (no signal: every sample is
# zero)". Expected: the sweep says why too, in the same words. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab o22; cd "$L"; policy; rxn node set-name LAB1 >/dev/null
{ hdr SILENT_1 YES YES NO; plan '{"op":"rx_capture","device":"driver=rxsim,serial=silent,noise_dbfs=-1000","frequency_hz":100e6,"sample_rate_hz":1e6,"gain_db":20,"duration_s":0.1},{"op":"rx_sweep","device":"driver=rxsim,serial=silent,noise_dbfs=-1000","start_hz":100e6,"stop_hz":104e6,"bin_hz":10e3,"gain_db":20}'; } | post
approve; rxn --sim run SILENT_1 > run.out 2>&1; echo "PUBLISH SILENT_1" | rxn publish SILENT_1 --push > pub.out 2>&1
md="$L/rx/.local/rx_agent_outbox/SILENT_1/RX_RESULT.md"
echo "RX_RESULT.md:"; grep -E 'Noise floor' "$md" | sed 's/^/  /'
"$RXN" --repo "$L/main" results show SILENT_1 > show.out 2>&1; echo "results show: rc=$?"; grep -i 'noise floor' show.out | sed 's/^/  /'
panics run.out pub.out show.out && { echo "broken: panic"; exit 0; }
grep -q 'Noise floor | n/a |' "$md" && { echo "broken: the sweep's noise floor is 'n/a' without a reason (the capture's says why)"; exit 0; }
grep -q 'Noise floor | n/a (' "$md" || { echo "broken: no sweep noise floor row found in RX_RESULT.md"; exit 0; }
echo held; exit 1
