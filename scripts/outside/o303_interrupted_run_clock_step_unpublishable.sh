#!/bin/bash
# o303: an authorized RED tone is running; the wall clock is stepped back an hour between the run's start and the
# keying (NTP setting right a clock that was ahead), and the run is killed (SIGKILL, power loss) while it transmits.
# The next `status` finished the interrupted run with completed_at (the keying, read an hour earlier) before
# started_at: the result was invalid ("timeline: completed_at is before started_at"), validate-result exit 2, and
# publish refused it for good — the main PC could never learn that a transmitter was keyed and the run cut short.
# Expected: a valid FAIL (INTERRUPTED) result that says the clock was stepped back. The step is played with
# libfaketime's timestamp file on the run's process only (the monotonic clock is not faked).
source "$(dirname "$0")/lib.sh"
FT=""; for f in /usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1 /usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1 /usr/lib/faketime/libfaketime.so.1; do [ -e $f ] && FT=$f; done
[ -n "$FT" ] || { echo "cannot play: libfaketime is not installed"; exit 2; }
newlab o303; policy; rxn node set-name LAB1 >/dev/null
tone='{"op":"tx_tone","device":"driver=rxsim,serial=o303","frequency_hz":433.92e6,"sample_rate_hz":2e6,"tone_offset_hz":5e4,"gain_db":0,"duration_s":2}'
{ hdr T1 YES NO YES; plan "$tone"; } | post; approve
spec=$L/spec; echo "+0" > $spec; LG=$L/rx/.local/rx_agent_ledger.jsonl
echo 'AUTHORIZE RF TX' | LD_PRELOAD=$FT FAKETIME_TIMESTAMP_FILE=$spec FAKETIME_NO_CACHE=1 FAKETIME_DONT_FAKE_MONOTONIC=1 \
  "$RXN" --repo "$L/rx" --sim run T1 > $L/run.out 2>&1 & P=$!
for i in $(seq 400); do grep -q run_started $LG 2>/dev/null && break; sleep 0.01; done
echo "@$(date -u -d '-1 hour' '+%Y-%m-%d %H:%M:%S')" > $spec
for i in $(seq 200); do grep -q tx_keyed $LG 2>/dev/null && break; sleep 0.02; done
sleep 0.3; kill -9 $P; wait $P 2>/dev/null; sleep 0.5
grep -q tx_keyed $LG || { echo "cannot play: the tone was never keyed"; cat $L/run.out; exit 2; }
echo "ledger: $(python3 -c "
import json
for l in open('$LG'):
    d = json.loads(l)
    if d.get('event') in ('run_started', 'tx_keyed'): print(d['event'], d['at'], end='; ')")"
rxn status > $L/st.out 2>&1; echo "status: $(grep -a INTERRUPTED $L/st.out | cut -c1-200)"
rxn validate-result T1 > $L/vr.out 2>&1; vr=$?; echo "validate-result: rc=$vr $(tail -1 $L/vr.out | cut -c1-200)"
echo "PUBLISH T1" | rxn publish T1 > $L/pub.out 2>&1; pub=$?; echo "publish: rc=$pub $(grep -a '^published\|error' $L/pub.out | head -1 | cut -c1-200)"
res=$(python3 -c "import json; d=json.load(open('$L/rx/.local/rx_agent_outbox/T1/RX_RESULT.json')); print(d['status'], d['timeline'], d['errors'][0][:90])" 2>&1)
echo "T1's result: $res"
panics $L/*.out && { echo "broken: a panic"; exit 0; }
bad=""
grep -aq INTERRUPTED $L/st.out || bad="$bad status did not finish the run as INTERRUPTED;"
[ "$vr" = 0 ] || bad="$bad the interrupted result does not validate (rc=$vr);"
[ "$pub" = 0 ] || bad="$bad publish refused the interrupted result (rc=$pub);"
[[ "$res" == FAIL*"stepped back"* ]] || bad="$bad the result is not a FAIL that says the clock was stepped back;"
[ -n "$bad" ] && { echo "broken:$bad"; exit 0; }; echo held; exit 1
