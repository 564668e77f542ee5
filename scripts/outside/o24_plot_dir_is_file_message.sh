#!/bin/bash
# o24: unclear error: `results show ID --plot DIR` and `results report --html DIR` given a file (a PNG of the same name,
# `/dev/null`) answer "cannot create x.png: File exists (os error 17)" — the file does exist, so what is wrong is not
# said; the same for `sweep --csv dir/s.csv` when `dir` is a file. Expected: "… is a file, not a folder". Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab o24; cd "$L"; published O24 >/dev/null 2>&1
echo png > "$L/spectrum.png"
"$RXN" --repo "$L/main" results show O24 --plot "$L/spectrum.png" > a.txt 2>&1; echo "results show --plot FILE: rc=$? $(head -c 200 a.txt)"
"$RXN" --repo "$L/main" results report --html /dev/null > b.txt 2>&1; echo "results report --html /dev/null: rc=$? $(head -c 200 b.txt)"
panics a.txt b.txt && { echo "broken: panic"; exit 0; }
grep -q 'File exists' a.txt b.txt && { echo "broken: a file named as the folder is answered 'File exists'"; exit 0; }
grep -q 'not a folder' a.txt && grep -q 'not a folder' b.txt || { echo "broken: the file in the way is not named"; exit 0; }
echo held; exit 1
