#!/bin/bash
# o286: a hostile branch posts a YELLOW receive-only task whose device args hold a driver's own switch,
# `biastee=true`: SoapyAirspy (and SoapyAirspyHF) write every device arg named like one of their settings
# when the device is made, so this powers the antenna port's bias-T with no `settings` in the plan and no
# `rx.allowed_settings` in the node's policy (an empty list here). The plan check refused only `replay*`,
# `fpga`, `fw`; UHD's `clock_source=`, libiio's `uri=xml:FILE`, LimeSuite's `cacheCalibrations=`... passed the same way.
# A task's device args now hold only the keys that pick a radio. The radio's own log (rxsim's `make` line
# for the task's own serial) is the witness that the device args reached the driver's make().
source "$(dirname "$0")/lib.sh"
newlab o286; policy
S=o286-$$
{ hdr BIAS YES YES NO; plan '{"op":"rx_capture","device":"driver=rxsim,serial='$S',biastee=true","frequency_hz":100e6,"sample_rate_hz":2e6,"gain_db":20,"duration_s":0.2}'; } | post; approve
echo "policy rx.allowed_settings: $(grep -o allowed_settings $L/rx/.local/rxnode-policy.json || echo 'none (empty)')"
echo "watch: $(grep -m1 -iE 'approved|invalid|reject|may not hold' $L/watch.out | head -c 300)"
rxn --sim run BIAS > $L/run.out 2>&1; rc=$?
echo "run rc=$rc; $(tail -1 $L/run.out | head -c 200)"
made=$(grep -c "make.*serial=$S" $RXSIM_EVENT_LOG); echo "rxsim made the radio from the task's args (serial $S, beside biastee=true; SoapySDR gives make() every arg): $made time(s)"
panics $L/watch.out $L/run.out && { echo "broken: a panic"; exit 0; }
[ "$made" -gt 0 ] && { echo "broken: a task's device args biastee=true reached the driver with rx.allowed_settings empty (run rc=$rc)"; exit 0; }
grep -q 'may not hold "biastee"' $L/watch.out $L/run.out || { echo "broken: the refusal does not name the key biastee"; exit 0; }
echo held; exit 1
