#!/bin/bash
# o25: cosmetic / hostile branch: numbers o11 did not reach. A plan whose rx_capture has "ppm": 1e300,
# "bandwidth_hz": 1e300 or "clkin": {"expected_dbfs": -1e300} is `valid` (exit 0) — a hostile main PC can post it, and
# the node's policy refuses the ppm later printing 300 digits. Flags print the same hundreds of digits: `-p 1e300`,
# `--min-snr-db 1e300`, `--clkin-tolerance-ppm 1e300`, `--clkin-expected-dbfs -1e300` (accepted: "no tone at the
# expected -1000…"), `--overlap`, `--crop`, `--bin-hz`, `--bandwidth-hz 1e300`, a sweep's `-e 1e300`. Expected: each refused naming it,
# printed compactly (1e300). Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o25.XXXXXX); cd "$L"; export HOME=$L
head -c 32768 /dev/zero > x.cf32
printf 'TASK_ID = T1\nTASK_TITLE = t\nSOURCE_BRANCH = video-development\nEXPECTED_HEAD = 0123456789abcdef0123456789abcdef01234567\nREQUIRES_APPROVAL = YES\nHARDWARE_ACCESS = YES\nRF_RX = YES\nRF_TX = NO\nALLOW_COMMIT = NO\nALLOW_PUSH = RX_RESULT_ONLY\n\n# t\n\n```rx-plan\n{"steps":[{"op":"rx_capture","device":"driver=rxsim","frequency_hz":100e6,"sample_rate_hz":2e6,"duration_s":1,"ppm":1e300,"bandwidth_hz":1e300,"clkin":{"tone_hz":100.1e6,"tolerance_ppm":0.5,"expected_dbfs":-1e300}}]}\n```\n' > t.md
"$RXN" validate t.md > v.txt 2>&1; vrc=$?; echo "validate (ppm, bandwidth_hz, expected_dbfs 1e300): rc=$vrc $(grep -c 'rx-plan step' v.txt) error(s)"
long=""
for a in "--sim capture -d driver=rxsim -f 100M -r 1M -t 0.1 -p 1e300" "--sim capture -d driver=rxsim -f 100M -r 1M -t 0.1 --bandwidth-hz 1e300" \
         "analyze x.cf32 -r 2M --min-snr-db 1e300" "analyze x.cf32 -r 2M -f 100M --clkin-tone-hz 100.1M --clkin-tolerance-ppm 1e300" \
         "analyze x.cf32 -r 2M -f 100M --clkin-tone-hz 100.1M --clkin-expected-dbfs -1e300" "analyze x.cf32 -r 2M --overlap 1e300" \
         "--sim sweep -d driver=rxsim --start-hz 88M --stop-hz 92M -B 10k --crop 1e300" "--sim sweep -d driver=rxsim --start-hz 88M --stop-hz 92M -B 1e300" \
         "--sim sweep -d driver=rxsim --start-hz 88M --stop-hz 92M -B 10k -i 1 -e 1e300"; do
  timeout 30 "$RXN" --repo "$L" $a > o.txt 2>&1; rc=$?
  n=$(grep -o '[0-9]\{30,\}' o.txt | head -1 | wc -c)
  echo "rxnode $a: rc=$rc $(head -c 140 o.txt | tr '\n' ' ')"
  [ "$n" -gt 1 ] && long="$long '$a'"
  panics o.txt && long="$long '$a'(panic)"
done
[ $vrc -eq 0 ] && { echo "broken: a plan with ppm / bandwidth_hz / expected_dbfs of 1e300 is valid"; exit 0; }
[ -n "$long" ] && { echo "broken: hundreds of digits printed for:$long"; exit 0; }
echo held; exit 1
