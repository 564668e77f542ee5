#!/bin/bash
# o292: sweep peaks of tones between bins. rxsim CW emitters over 99-104 MHz, 5 kHz bins at 2 MS/s (hops 1.5 MHz
# wide, edges at 100.5, 102 and 103.5 MHz): an emitter half a bin off a bin's centre read that bin's centre and
# 1.4 dB low (-40 dBFS at 101.2525 MHz: 101.250000 MHz -41.4 dBFS; on the hop edge, -50 dBFS at 102.0025 MHz:
# 102.005000 MHz -51.4 dBFS), where `analyze` of a capture gives a tone's own place and power. Expected: every
# emitter within 0.05 bin and 0.1 dB of its truth. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o292.XXXXXX); cd "$L"
em="101.2525e6:-40;99.6025e6:-50;102.7512e6:-45;102.0025e6:-50;103.4975e6:-45;100.5e6:-40"
"$RXN" --sim --json sweep -d "driver=rxsim,serial=o292,emitters=$em" --start-hz 99M --stop-hz 104M -B 5k -r 2M -g 20 \
  --dwell-s 0.05 > s.json 2> s.err; echo "sweep: rc=$?"
panics s.json s.err && { echo "broken: panic"; exit 0; }
python3 - s.json "$em" <<'PY' || { echo "broken: a sweep reads a tone between bins at its bin's centre and level"; exit 0; }
import json, sys
d = json.load(open(sys.argv[1])); peaks = d["peaks"]; bad = 0
for item in sys.argv[2].split(";"):
    f, l = map(float, item.split(":"))
    p = min(peaks, key=lambda p: abs(p["frequency_hz"] - f))
    ok = abs(p["frequency_hz"] - f) <= 0.05 * d["bin_hz"] and abs(p["power_db"] - l) <= 0.1
    bad += not ok
    print("  emitter %.4f MHz %.1f dBFS: peak %.6f MHz %.2f dBFS %s" % (f / 1e6, l, p["frequency_hz"] / 1e6, p["power_db"], "ok" if ok else "WRONG"))
sys.exit(1 if bad else 0)
PY
echo held; exit 1
