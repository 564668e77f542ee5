#!/bin/bash
# o272: rxsim's replay= of a recording that ends mid-sample (rtl_sdr's cu8 cut at an odd byte; a SigMF cf32_le dataset
# 3 bytes short of whole samples, as a recorder stopped mid-write leaves it, or one given the wrong layout). `rxnode
# analyze` refuses both ("100001 bytes is not a whole number of cu8 samples (2 bytes each): truncated or wrong
# format"); rxsim replayed them without their last bytes and the captures of them went on (exit 0, PASS).
# Expected (docs/hardware.md#replaying-a-recording-as-a-radio): refused when the radio is made, naming the byte count
# and the sample size, as analyze does; a whole file still replays. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o272.XXXXXX); cd "$L"; export XDG_CACHE_HOME=$L/cache
python3 - <<'PY'
import numpy as np, json
N = 50000; t = np.arange(N)
x = 0.3 * np.exp(2j * np.pi * 0.05 * t) + (np.random.default_rng(2).standard_normal((N, 2)) @ [1, 1j]) * 0.02
iq = np.empty(2 * N); iq[0::2] = x.real; iq[1::2] = x.imag
u8 = np.clip(np.round(iq * 128 + 127.5), 0, 255).astype(np.uint8).tobytes()
open('whole.cu8', 'wb').write(u8); open('cut.cu8', 'wb').write(u8 + b'\x80')       # rtl_sdr's bytes, one more
open('cut.sigmf-data', 'wb').write(iq.astype('<f4').tobytes()[:-3])
json.dump({"global": {"core:datatype": "cf32_le", "core:sample_rate": 2000000, "core:version": "1.2.0"},
           "captures": [{"core:sample_start": 0, "core:frequency": 100e6}], "annotations": []}, open('cut.sigmf-meta', 'w'))
PY
run() { "$RXN" --sim capture -d "driver=rxsim,serial=$1,replay=$L/$1$2" -f 100M -r 2M -t 0.1 > "c.$1.txt" 2>&1; echo $?; }
for f in cut.cu8 cut.sigmf-meta; do "$RXN" analyze "$f" -r 2M > "a.$f.txt" 2>&1; echo "analyze $f: rc=$? $(head -c 160 "a.$f.txt")"; done
r1=$(run whole.cu8 ,replay_format=cu8,replay_rate=2e6,replay_freq=100e6); r2=$(run cut.cu8 ,replay_format=cu8,replay_rate=2e6,replay_freq=100e6); r3=$(run cut.sigmf-meta "")
for f in whole.cu8 cut.cu8 cut.sigmf-meta; do echo "replay $f: $(grep -oE 'rxsim: replay.*|peaks.*|status.*' "c.$f.txt" | tr -s ' ' | tr '\n' ' ' | cut -c1-220)"; done
panics a.*.txt c.*.txt && { echo "broken: a panic"; exit 0; }
[ "$r1" = 0 ] && grep -qE 'peaks +100.100000 MHz' c.whole.cu8.txt || { echo "broken: a whole cu8 file no longer replays (rc=$r1)"; exit 0; }
bad=""
[ "$r2" = 0 ] && bad="$bad cut.cu8 replayed, exit 0 ($(grep status c.cut.cu8.txt));"
grep -q '100001 bytes is not a whole number of cu8 samples (2 bytes each)' c.cut.cu8.txt || bad="$bad cut.cu8 not refused naming its bytes;"
[ "$r3" = 0 ] && bad="$bad cut.sigmf-meta replayed, exit 0;"
grep -q '399997 bytes is not a whole number of cf32_le samples (8 bytes each)' c.cut.sigmf-meta.txt || bad="$bad cut.sigmf-meta not refused naming its bytes;"
[ -n "$bad" ] && { echo "broken: rxsim replays what analyze refuses as ending mid-sample:$bad"; exit 0; }; echo held; exit 1
