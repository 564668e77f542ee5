#!/bin/bash
# o210: a confident wrong number from a recording whose stated rate is wrong. rxsim's GSM BCCH carrier (radio +5 ppm)
# recorded as raw cf32 at 1.024 MS/s, then analysed with `-r 1M` (or 1.001M: an rtl_sdr rate misremembered): the
# FCCH tone's offset scales with the rate, and `analyze --freq-cal gsm` said PASS +6.58 ± 0.00093 ppm (1700 σ from
# the truth), confidence 0.01, exit 0. GSM's TDMA frame is a clock in the signal: the bursts' spacing says the samples
# ran 2.4 % off the stated rate. Expected: the true rate PASS within 0.01 ppm of +5; a wrong one FAIL, naming the
# TDMA timing, no number, exit 1. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o210.XXXXXX); cd "$L"
"$RXN" --sim capture -d driver=rxsim,serial=o210-$$,gsm_freq=935.2e6,ppm=5 -f 935.2M -r 1.024M -t 4 --record gsm.cf32 > cap.txt 2>&1
echo "capture at 1.024 MS/s: rc=$? $(stat -c %s gsm.cf32 2>/dev/null) bytes"
bad=""
"$RXN" --json analyze gsm.cf32 -r 1.024M -f 935.2M --freq-cal gsm > true.json 2>&1; echo "analyze -r 1.024M: rc=$?"
python3 - true.json <<'PY' || bad="$bad true-rate-lost-its-number"
import json, sys
f = json.load(open(sys.argv[1]))["freq_cal"]
print(" true rate:", f.get("status"), f.get("ppm"), f.get("uncertainty_ppm"))
sys.exit(0 if f.get("status") == "PASS" and abs(f["ppm"] - 5) < 0.01 else 1)
PY
for r in 1M 1.001M; do
  "$RXN" --json analyze gsm.cf32 -r $r -f 935.2M --freq-cal gsm > w.json 2>&1; rc=$?; echo "analyze -r $r: rc=$rc"
  panics w.json && bad="$bad panic"
  python3 - w.json $rc <<'PY' || bad="$bad -r$r-gave-a-number"
import json, sys
f = json.load(open(sys.argv[1]))["freq_cal"]
print(" wrong rate:", f.get("status"), f.get("ppm"), f.get("uncertainty_ppm"), (f.get("detail") or "")[:200])
sys.exit(0 if f.get("status") != "PASS" and f.get("ppm") is None and "TDMA" in (f.get("detail") or "") and sys.argv[2] == "1" else 1)
PY
done
[ -n "$bad" ] && { echo "broken: a wrong stated rate gives a confident GSM calibration:$bad"; exit 0; }; echo held; exit 1
