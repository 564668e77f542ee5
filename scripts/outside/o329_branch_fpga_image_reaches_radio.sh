#!/bin/bash
# o329: a hostile branch commits an FPGA image and posts a YELLOW receive-only task whose device args
# name it (UHD's `fpga=PATH`, also `fw=`; the operator's next `git pull` puts the file in the checkout):
# the driver loads that image when the device is made, and an FPGA image drives the transmitter itself,
# with no TX stream, no RF_TX, no AUTHORIZE RF TX. A plan may not make a radio load a file (as `replay=`
# is refused). The radio's own log (rxsim's `make` line for the serial) is the witness that the device
# args reached the driver.
source "$(dirname "$0")/lib.sh"
newlab o329; policy
S=o329-$$
mkdir -p $L/main/fpga; head -c 4096 /dev/urandom > $L/main/fpga/b210.bin
{ hdr FPGA YES YES NO; plan '{"op":"rx_capture","device":"driver=rxsim,serial='$S',fpga='$L'/rx/fpga/b210.bin","frequency_hz":100e6,"sample_rate_hz":2e6,"gain_db":20,"duration_s":0.2}'; } | post; approve
G -C $L/rx pull -q --ff-only 2>/dev/null # the operator updates the lab checkout, as any day
echo "watch: $(grep -m1 -iE 'approved|invalid|reject|may not hold' $L/watch.out | head -c 240); the image in the checkout: $(ls $L/rx/fpga/b210.bin 2>&1)"
rxn --sim run FPGA > $L/run.out 2>&1; rc=$?
echo "run rc=$rc; $(tail -1 $L/run.out | head -c 200)"
made=$(grep -c "make.*serial=$S" $RXSIM_EVENT_LOG); echo "rxsim made the radio with the image's args: $made time(s)"
panics $L/watch.out $L/run.out && { echo "broken: a panic"; exit 0; }
[ "$made" -gt 0 ] && { echo "broken: a task's device args fpga=<file from the branch> reached the driver (approved, run rc=$rc)"; exit 0; }
echo held; exit 1
