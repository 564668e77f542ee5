#!/bin/bash
# o8: lost data on the main PC: `rxnode results show ID --plot DIR` and `rxnode results report --html DIR` replace files
# that already exist in DIR without a word and without --force (a user's own SPECTRUM_1.png, a previous result's picture,
# an index.html), exit 0. Everywhere else "no output is ever overwritten silently" (docs/operator.md: --record, --plot,
# sweep --csv, analyze --plot are refused, exit 2, naming the file; --force overwrites). Exit 0 = defect present.
. "$(dirname "$0")/lib.sh"
newlab plotdir; published OVW; cd "$L/main"
mkdir -p "$L/mine" "$L/site"; echo "my own picture" > "$L/mine/SPECTRUM_1.png"; echo "my own page" > "$L/site/index.html"
"$RXN" --repo "$L/main" results show OVW --plot "$L/mine" > "$L/s.out" 2>&1; rs=$?
"$RXN" --repo "$L/main" results report --html "$L/site" > "$L/h.out" 2>&1; rh=$?
echo "results show --plot rc=$rs: $(tail -1 "$L/s.out")"; echo "results report --html rc=$rh: $(tail -1 "$L/h.out" | cut -c1-120)"
a=$(grep -c 'my own picture' "$L/mine/SPECTRUM_1.png"); b=$(grep -c 'my own page' "$L/site/index.html")
echo "user's SPECTRUM_1.png kept: $a; user's index.html kept: $b"
[ "$a" = 0 ] || [ "$b" = 0 ] && { echo "broken: existing files in DIR replaced silently (no --force, exit 0)"; exit 0; }; echo held; exit 1
