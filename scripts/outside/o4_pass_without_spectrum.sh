#!/bin/bash
# o4: a PASS that did not happen: a plan's rx_capture whose fft_size exceeds its samples (0.1 s at 2 MS/s = 200 000
# samples, fft_size 1048576) passes `validate`, runs on rxsim, measures no spectrum at all ("no Welch segment: fewer
# samples than one FFT"), and the step and the result are PASS with `peaks: []`, which reads as "nothing there".
# `analyze` refuses the same shape (exit 2, "fewer than --fft-size"), and an all-zero capture without a floor is FAIL
# (docs/operator.md#levels-without-power); `rxnode capture --fft-size 1048576 -t 0.1` is PASS/exit 0 too.
# Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab nofft; policy; rxn node set-name LAB1 >/dev/null
{ hdr NOFFT YES YES NO; plan '{"op":"rx_capture","device":"driver=rxsim","frequency_hz":100e6,"sample_rate_hz":2e6,"gain_db":20,"duration_s":0.1,"fft_size":1048576}'; } | post
rxn validate "$L/main/docs/handoff/NEXT_RX_TASK.md" >/dev/null 2>&1; echo "validate rc=$?"
approve; rxn --sim run NOFFT > "$L/run.out" 2>&1; rc=$?; echo "run rc=$rc: $(grep -E 'PASS|FAIL|PARTIAL' "$L/run.out" | head -2 | tr '\n' ' ' | cut -c1-220)"
grep -c 'activateStream' "$RXSIM_EVENT_LOG" | sed 's/^/rxsim activateStream lines: /'
python3 -c "
import json; d=json.load(open('$L/rx/.local/rx_agent_outbox/NOFFT/RX_RESULT.json')); c=d['captures'][0]
print('result', d['status'], '| capture', c['status'], '| noise_floor_db', c.get('noise_floor_db'), '| peaks', c.get('peaks'), '| psd bins', len(c.get('psd_db') or []))"
st=$(python3 -c "import json; print(json.load(open('$L/rx/.local/rx_agent_outbox/NOFFT/RX_RESULT.json'))['status'])")
[ "$st" = PASS ] && { echo "broken: a capture that measured no spectrum (fft_size > samples) is PASS, validate let it through"; exit 0; }; echo held; exit 1
