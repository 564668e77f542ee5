#!/bin/bash
# o287: the operator lists SoapyBladeRF's `load_fpga` in rx.allowed_settings, to load a known image by hand
# (`--setting load_fpga=...`); the list is the node's, so a hostile branch's YELLOW receive-only task could give
# the same key with a file it committed (in the checkout after the operator's next `git pull`): the driver loads
# that FPGA image on writeSetting, and an image drives the transmitter itself, outside every TX check. The same
# held for `flash_fpga`, `flash_firmware`, `erase_stored_fpga`, LimeSuite's `TXTSP_CONST`. A task may now never
# give such a key, whatever the policy lists. The radio's own log (rxsim's `writeSetting` line) is the witness.
source "$(dirname "$0")/lib.sh"
newlab o287; policy '{"rx":{"max_duration_s":10,"max_gain_db":50,"allowed_settings":["load_fpga"]}}'
S=o287-$$
mkdir -p $L/main/fpga; head -c 4096 /dev/urandom > $L/main/fpga/hostedxA4.rbf
{ hdr FPGASET YES YES NO; plan '{"op":"rx_capture","device":"driver=rxsim,serial='$S'","frequency_hz":100e6,"sample_rate_hz":2e6,"gain_db":20,"duration_s":0.2,"settings":{"load_fpga":"'$L'/rx/fpga/hostedxA4.rbf"}}'; } | post; approve
G -C $L/rx pull -q --ff-only 2>/dev/null # the operator updates the lab checkout, as any day
echo "policy: $(cat $L/rx/.local/rxnode-policy.json)"
echo "watch: $(grep -m1 -iE 'approved|invalid|reject|never be set' $L/watch.out | head -c 300)"
rxn --sim run FPGASET > $L/run.out 2>&1; rc=$?
echo "run rc=$rc; $(tail -1 $L/run.out | head -c 200)"
wrote=$(grep -c "writeSetting load_fpga=.*serial=$S" $RXSIM_EVENT_LOG); echo "rxsim wrote load_fpga=<the branch's file>: $wrote time(s)"
grep -m1 "writeSetting load_fpga" $RXSIM_EVENT_LOG | head -c 240; echo
panics $L/watch.out $L/run.out && { echo "broken: a panic"; exit 0; }
[ "$wrote" -gt 0 ] && { echo "broken: a task's settings load_fpga=<file from the branch> reached the driver (run rc=$rc)"; exit 0; }
grep -q 'settings.load_fpga can never be set by a task' $L/watch.out $L/run.out || { echo "broken: the refusal does not name settings.load_fpga"; exit 0; }
echo held; exit 1
