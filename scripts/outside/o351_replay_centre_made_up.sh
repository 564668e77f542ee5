#!/bin/bash
# o351: rxsim's replay= gave a recording the centre 100 MHz when nobody stated one, and let a client tune a replay
# anywhere while its samples stayed where they were recorded. A SigMF recording with no core:frequency (optional in
# SigMF) and a raw cf32 file without replay_freq became radios at 100 MHz (their tone captured at 100.100000 MHz,
# PASS), one whose only core:frequency is an annotation's took that as its centre, one whose second capture segment
# alone states it (refused by analyze) replayed at it; a 433.92 MHz recording captured with -f 100M reported its
# +100 kHz tone at 100.100000 MHz, PASS.
# Expected (docs/hardware.md#replaying-a-recording-as-a-radio): a recording that states no centre needs replay_freq=F
# (refused naming core:frequency, or replay_freq for a raw file), a replay_freq that disagrees with the meta is refused,
# and tuning a replay away from its centre is refused naming both; at its stated centre it replays. Exit 0 = defect.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o351.XXXXXX); cd "$L"; export XDG_CACHE_HOME=$L/cache
python3 - <<'PY'
import numpy as np, json
fs = 2e6; n = 1 << 18; t = np.arange(n) / fs; rng = np.random.default_rng(1)
x = (0.3 * np.exp(2j * np.pi * 100e3 * t) + 0.001 * (rng.normal(size=n) + 1j * rng.normal(size=n))).astype(np.complex64)
g = {"core:datatype": "cf32_le", "core:sample_rate": fs, "core:version": "1.2.0"}
for name, cap in (("nofreq", {}), ("ism", {"core:frequency": 433.92e6})):
    x.tofile(name + '.sigmf-data')
    json.dump({"global": g, "captures": [dict({"core:sample_start": 0}, **cap)], "annotations": []}, open(name + '.sigmf-meta', 'w'))
x.tofile('raw.cf32')
# a centre only in an annotation (no tuning), and in one of two capture segments
x.tofile('annotated.sigmf-data'); x.tofile('half.sigmf-data')
json.dump({"global": g, "captures": [{"core:sample_start": 0}],
           "annotations": [{"core:sample_start": 0, "core:sample_count": 10, "core:frequency": 433.92e6}]}, open('annotated.sigmf-meta', 'w'))
json.dump({"global": g, "captures": [{"core:sample_start": 0}, {"core:sample_start": 1000, "core:frequency": 433.92e6}],
           "annotations": []}, open('half.sigmf-meta', 'w'))
PY
run() { "$RXN" --sim capture -d "driver=rxsim,serial=$1,$2" -f "$3" -r 2M -t 0.1 > "c.$1.txt" 2>&1; echo $?; }
r1=$(run nofreq "replay=$L/nofreq.sigmf-meta" 100M)
r2=$(run raw "replay=$L/raw.cf32,replay_format=cf32,replay_rate=2e6" 100M)
r3=$(run elsewhere "replay=$L/ism.sigmf-meta" 100M)
r4=$(run ism "replay=$L/ism.sigmf-meta" 433.92M)
r5=$(run stated "replay=$L/nofreq.sigmf-meta,replay_freq=433.92e6" 433.92M)
r6=$(run annotated "replay=$L/annotated.sigmf-meta" 433.92M)
r7=$(run half "replay=$L/half.sigmf-meta" 433.92M)
"$RXN" analyze half.sigmf-meta > a.half.txt 2>&1; echo "analyze half.sigmf-meta: rc=$? $(head -c 200 a.half.txt)"
for f in nofreq raw elsewhere ism stated annotated half; do echo "replay $f: $(grep -oE 'rxsim: .*|peaks.*|status.*' "c.$f.txt" | tr -s ' ' | tr '\n' ' ' | cut -c1-240)"; done
panics c.*.txt && { echo "broken: a panic"; exit 0; }
[ "$r4" = 0 ] && grep -qE 'peaks +434.020000 MHz' c.ism.txt || { echo "broken: a recording at its own centre no longer replays (rc=$r4)"; exit 0; }
bad=""
[ "$r1" = 0 ] && bad="$bad no core:frequency replayed at a made-up centre ($(grep -oE 'peaks +[0-9.]+ MHz' c.nofreq.txt));"
grep -q 'states no core:frequency' c.nofreq.txt || bad="$bad no core:frequency not refused naming it;"
[ "$r2" = 0 ] && bad="$bad a raw file without replay_freq replayed ($(grep -oE 'peaks +[0-9.]+ MHz' c.raw.txt));"
[ "$r3" = 0 ] && bad="$bad a 433.92 MHz recording tuned to 100 MHz reported $(grep -oE 'peaks +[0-9.]+ MHz' c.elsewhere.txt | tr -s ' ');"
grep -q 'the replayed recording was made at 433920000 Hz' c.elsewhere.txt || bad="$bad tuning elsewhere not refused naming the centre;"
[ "$r6" = 0 ] && bad="$bad an annotation's core:frequency taken as the centre ($(grep -oE 'peaks +[0-9.]+ MHz' c.annotated.txt | tr -s ' '));"
[ "$r7" = 0 ] && bad="$bad a centre stated by one of two segments, refused by analyze, replayed;"
[ "$r5" = 0 ] && grep -qE 'peaks +434.020000 MHz' c.stated.txt || bad="$bad replay_freq does not state a missing centre;"
[ -n "$bad" ] && { echo "broken: a replay tuned to a centre the recording does not state:$bad"; exit 0; }; echo held; exit 1
