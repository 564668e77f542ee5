#!/bin/bash
# o306: two radios calibrated at once in two terminals (`clkin calibrate --method gsm` on rxsim radios A and B).
# Radio A's command is held for 4 s just before it puts its calibration file in place (strace delays that one
# rename: a slow disk, a busy machine); B's calibration runs meanwhile. Both said "PASS … kept in
# .local/calibration.json", but A had read the file before B wrote it, so A's write dropped B's measurement:
# `--apply-cal` on B then had nothing to apply. Expected: both measurements kept (the file is read, changed and
# written under a lock).
source "$(dirname "$0")/lib.sh"
command -v strace >/dev/null || { echo "cannot play: strace is not installed"; exit 2; }
newlab o306; policy; rxn node set-name LAB1 >/dev/null
cal() { (cd "$L/rx" && "$RXN" --repo "$L/rx" --sim clkin calibrate -d "driver=rxsim,serial=$1,ppm=$2,gsm_freq=935.2e6" \
  --method gsm -f 935.2M -r 1.024M -t 1 -g 20 2>&1); }
cal SEED 1 > $L/seed.out; echo "radio SEED: $(grep -a '^PASS\|^FAIL\|error' $L/seed.out | cut -c1-100)"
C=$L/rx/.local/calibration.json
# Radio A: its third rename (the radio lock is the first, the record of the newest sealed version the second) is
# the calibration file's; it is held 4 s.
( cd "$L/rx" && strace -f -qq -o $L/renames.txt -e trace=rename -e inject=rename:delay_enter=4000000:when=3 \
  "$RXN" --repo "$L/rx" --sim clkin calibrate -d "driver=rxsim,serial=A,ppm=3,gsm_freq=935.2e6" --method gsm \
  -f 935.2M -r 1.024M -t 1 -g 20 > $L/a.out 2>&1 ) & A=$!
for i in $(seq 200); do [ "$(cat $L/renames.txt 2>/dev/null | grep -c 'rename(')" -ge 3 ] && break; sleep 0.05; done
held=$(grep -a 'rename(' $L/renames.txt | sed -n 3p | grep -o '", "[^"]*"' | sed 's/.*\///; s/"//')
echo "radio A held at its rename of ${held:-?}"
cal B -4 > $L/b.out; wait $A
echo "radio A: $(grep -a '^PASS\|^FAIL\|error' $L/a.out | cut -c1-100) / $(grep -ao 'kept in [^:]*' $L/a.out)"
echo "radio B: $(grep -a '^PASS\|^FAIL\|error' $L/b.out | cut -c1-100) / $(grep -ao 'kept in [^:]*' $L/b.out)"
kept=$(python3 -c "import json; print(' '.join(sorted(k.split('serial=')[1] for k in json.load(open('$C'))['sealed']['radios'])))" 2>&1)
echo "radios in $C: $kept"
panics $L/*.out && { echo "broken: a panic"; exit 0; }
[ "$held" = calibration.json ] || { echo "cannot play: radio A's third rename was ${held:-none}, not the calibration file's"; exit 2; }
bad=""
for r in SEED A B; do
  case " $kept " in *" $r "*) ;; *) grep -aq 'kept in' $L/$(echo $r | tr A-Z a-z).out 2>/dev/null && bad="$bad radio $r said kept and is not in the file;" || bad="$bad radio $r is not in the file;";; esac
done
[ -n "$bad" ] && { echo "broken:$bad"; exit 0; }; echo held; exit 1
