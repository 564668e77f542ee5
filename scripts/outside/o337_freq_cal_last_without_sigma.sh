#!/bin/bash
# o337: RX_RESULT.md's freq_cal table printed the radio's last calibration as `last -12.5012 ppm (gsm, TIME)`:
# four decimals, no uncertainty and no age, while RX_RESULT.json holds both (uncertainty_ppm, age_s). A task
# measures an rxsim radio (ppm=-12.5) twice on GSM; the second row's clock names the first measurement.
# Expected: that cell carries `± σ ppm (1σ)` and the measurement's age (`… old`), as the JSON says.
# Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab o337; policy; rxn node set-name LAB1 >/dev/null
D='"device":"driver=rxsim,serial=o337,pace=0,ppm=-12.5,gsm_freq=935.2e6,gsm_snr_db=6","method":"gsm","frequency_hz":935.2e6,"sample_rate_hz":1e6,"gain_db":20,"duration_s":4'
{ hdr O337 YES YES NO; plan "{\"op\":\"freq_cal\",$D},{\"op\":\"freq_cal\",$D}"; } | post; approve
rxn --sim run O337 > "$L/run.out" 2>&1; echo "run: rc=$?"
R=$(find "$L/rx" -path '*O337*' -name RX_RESULT.md | head -1); echo "result: $R"
row=$(grep -a '^| 2 |' "$R" 2>/dev/null); echo "row 2: $row"
python3 - "${R%.md}.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["freq_cal"][1]["clock"]["last_measurement"]
print(" json last_measurement:", c.get("ppm"), "±", c.get("uncertainty_ppm"), "age_s", c.get("age_s"))
PY
panics "$L/run.out" && { echo "broken: panic"; exit 0; }
[ -n "$row" ] || { echo "broken: no second freq_cal row in RX_RESULT.md"; exit 0; }
echo "$row" | grep -q 'last -12\.[0-9]* ± [0-9.]* ppm (1σ) (gsm, [^,]*, [0-9.]* [a-z]* old' ||
  { echo "broken: the freq_cal clock cell prints the last calibration without its uncertainty or age"; exit 0; }
echo held; exit 1
