#!/bin/bash
# o293: `clkin compare` with one radio's input saturated. rxsim MASTER with its tone at -20 dBFS and SLAVE with the
# same tone at +6 dBFS (its samples clipped at full scale): SLAVE's line read "tone 1.7 dBFS (65.9 dB over the band's
# noise)", the converter's level, never saying it clipped. Expected: SLAVE's tone level and band SNR absent, the
# text naming the saturation (`clipped_fraction` in the JSON); MASTER's -20.0 dBFS kept; the relative frequency
# still +200 ppb (clipping keeps a tone's phase). Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o293.XXXXXX); cd "$L"
args=(--sim clkin compare -d "driver=rxsim,serial=o293m,tone_hz=100.1e6,ppm=0.5" -d "driver=rxsim,serial=o293s,tone_hz=100.1e6,ppm=0.7,tone_dbfs=6" -f 100M -r 2M --tone-hz 100.1M -t 1)
"$RXN" "${args[@]}" > c.txt 2>&1; echo "compare: rc=$?"; grep -E "^(PASS|FAIL)|SLAVE |MASTER " c.txt | cut -c1-220
"$RXN" --json "${args[@]}" > c.json 2>/dev/null
panics c.txt c.json && { echo "broken: panic"; exit 0; }
python3 - c.json c.txt <<'PY' || { echo "broken: a clipped radio's tone level is reported as the tone's"; exit 0; }
import json, sys
d = json.load(open(sys.argv[1])); txt = open(sys.argv[2]).read()
s, m = d["slave"]["tone"], d["master"]["tone"]; k = d["clkin_compare"]
print("  slave tone:", s, " master tone:", m, " relative ppb:", k.get("relative_ppb"))
ok = s.get("level_dbfs") is None and s.get("snr_db") is None and (s.get("clipped_fraction") or 0) > 0.5
ok = ok and abs(m["level_dbfs"] + 20) < 0.1 and "saturated" in txt
ok = ok and k.get("relative_ppb") is not None and abs(k["relative_ppb"] - 200) < 0.01
sys.exit(0 if ok else 1)
PY
echo held; exit 1
