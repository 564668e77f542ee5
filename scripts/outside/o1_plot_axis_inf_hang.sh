#!/bin/bash
# o1: main PC facing a hostile rx-node: a published result whose picture axis ends past f64 (start_hz 1e308, step_hz 1e307:
# every value finite, their sum infinite) sends `results show ID --plot DIR` and `results report --html DIR` into an endless
# loop (plotters' key-point search on an infinite range): 100 % CPU, no output, no error. Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab plotinf; published PINF
peer_edit PINF "s=d['pictures']['spectra'][0]; s['start_hz']=1e308; s['step_hz']=1e307"
cd "$L/main"
timeout 60 "$RXN" --repo "$L/main" results show PINF --plot "$L/plot" >"$L/show.out" 2>&1; rs=$?
timeout 60 "$RXN" --repo "$L/main" results report --html "$L/html" >"$L/html.out" 2>&1; rh=$?
echo "results show --plot: rc=$rs ($(tail -1 "$L/show.out" | cut -c1-120))"
echo "results report --html: rc=$rh ($(tail -1 "$L/html.out" | cut -c1-120))"
panics "$L/show.out" "$L/html.out"
[ $rs -eq 124 ] || [ $rh -eq 124 ] && { echo "broken: a peer's picture axis hangs the main PC's drawing (killed after 60 s)"; exit 0; }; echo held; exit 1
