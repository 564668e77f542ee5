#!/bin/bash
# o241: a new user reads `rxnode capture --help` (and sweep, clkin compare, clkin calibrate): `-g, --gain-db  RX gain:
# dB, or per element LNA=24,VGA=20` says nothing of what happens without it; a capture without -g then reports
# "gain requested (driver default) actual 20.0 dB". The same for -A/--antenna, -w/--bandwidth-hz, --clock-source(s).
# Expected: each of these flags' help says its default (not set: the radio keeps its own). Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab o241; cd "$L"
missing=""
for sub in "capture" "sweep" "clkin compare" "clkin calibrate"; do
  "$RXN" $sub --help > help.txt 2>&1
  for flag in --gain-db --antenna --bandwidth-hz --clock-source --clock-sources; do
    # the flag's entry: its line and the description lines up to the next flag
    entry=$(awk -v f="$flag" '$0 ~ "^ +(-[a-zA-Z], )?"f" " {on=1; print; next} on && /^ +-/ {on=0} on' help.txt)
    [ -n "$entry" ] || continue
    echo "rxnode $sub $flag: $(echo "$entry" | tr -s ' \n' ' ' | head -c 200)"
    echo "$entry" | grep -qi default || missing="$missing $sub:$flag"
  done
done
panics help.txt && { echo "broken: panic"; exit 0; }
[ -z "$missing" ] || { echo "broken: --help does not say what happens without:$missing"; exit 0; }
echo held; exit 1
