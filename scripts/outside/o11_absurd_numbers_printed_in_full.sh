#!/bin/bash
# o11: cosmetic/unclear: extreme but finite values are printed digit by digit instead of being named implausible:
# `validate` of a plan with "duration_s": 1e300 is VALID (exit 0) and its step line carries a 301-digit duration
# (the same line the approval prompt shows); "gain_db": -1e308 is valid with a 309-digit gain (the run then BLOCKs it
# with the same 309 digits); a SigMF meta with rxnode:clock.ppm_correction_applied 1e-300 is reported as "tuning corrected
# by +0.000…(300 zeros)" and ±1e6 ppm (a 100 % correction) as an ordinary correction. Frequencies and rates already have
# plausibility bounds (1 kHz … 300 GHz, "implausible"); durations, gains and ppm have none. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o11.XXXXXX); cd "$L"
H='TASK_ID = T1\nTASK_TITLE = t\nSOURCE_BRANCH = video-development\nEXPECTED_HEAD = 0123456789abcdef0123456789abcdef01234567\nREQUIRES_APPROVAL = YES\nHARDWARE_ACCESS = YES\nRF_RX = YES\nRF_TX = NO\nALLOW_COMMIT = NO\nALLOW_PUSH = RX_RESULT_ONLY\n\n# t\n\n```rx-plan\n'
printf "$H"'{"steps":[{"op":"rx_capture","device":"driver=rxsim","frequency_hz":100e6,"sample_rate_hz":2e6,"gain_db":-1e308,"duration_s":1e300}]}\n```\n' > t.md
"$RXN" validate t.md > v.out 2>&1; rc=$?
line=$(grep 'rx_capture driver=rxsim' v.out); echo "validate rc=$rc; step line is ${#line} characters: $(echo "$line" | cut -c1-140)…"
"$RXN" --sim capture -d driver=rxsim -f 100M -r 2M -t 0.05 -g 20 --record r.sigmf-data >/dev/null 2>&1
python3 -c "
import json; d=json.load(open('r.sigmf-meta')); d['global']['rxnode:clock']['ppm_correction_applied']=1e-300; open('r.sigmf-meta','w').write(json.dumps(d))"
c=$("$RXN" analyze r.sigmf-meta 2>&1 | grep 'tuning corrected'); echo "analyze clock line is ${#c} characters: $(echo "$c" | cut -c1-120)…"
[ $rc -eq 0 ] && [ ${#line} -gt 300 ] && { echo "broken: 1e300 s / -1e308 dB accepted and printed as hundreds of digits"; exit 0; }; echo held; exit 1
