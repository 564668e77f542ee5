#!/bin/bash
# o14: unclear/wrong provenance: `rxnode capture -p 10` (a manual correction typed by the operator; no --apply-cal, no
# .local/calibration.json) reports "correction +10.000 ppm applied (this radio's calibration, --apply-cal)": the report
# credits a calibration that does not exist and a flag that was not given. docs/operator.md: `-p P` is "a manual frequency
# correction" (the same sweep prints both this line and "manual frequency correction 10 ppm"). Expected: "manual correction (-p)". Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
L=$(mktemp -d /tmp/o14.XXXXXX); cd "$L"; ls .local/calibration.json 2>/dev/null
"$RXN" --sim capture -d driver=rxsim -f 100M -r 2M -t 0.05 -g 20 -p 10 > out.txt 2>&1; echo "capture -p 10 rc=$?"
grep -E 'frequency|correction' out.txt
"$RXN" --sim sweep -d driver=rxsim --start-hz 88M --stop-hz 92M -B 10k -g 20 -p 10 > sw.txt 2>&1; echo "sweep -p 10: $(grep -iE 'correct' sw.txt | sed 's/  */ /g' | tr '\n' '|')"
grep -q "this radio's calibration, --apply-cal" out.txt && { echo "broken: a manual -p correction is reported as this radio's calibration via --apply-cal"; exit 0; }; echo held; exit 1
