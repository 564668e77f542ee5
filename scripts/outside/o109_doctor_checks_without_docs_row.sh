#!/bin/bash
# o109: missing docs: `rxnode doctor` printed the checks `status publishing` and `interrupted runs`, but docs/doctor.md,
# the page that explains each check (when it passes, fails, is skipped), had no row for either. Expected: every check
# name doctor prints (in a checkout and outside one) has its row in the docs/doctor.md of the binary's own checkout
# (found from $RXN: DIR/target/<profile>/rxnode -> DIR/docs/doctor.md; DOCS=... overrides).
source "$(dirname "$0")/lib.sh"
DOCS=${DOCS:-$(cd "$(dirname "$RXN")/../.." && pwd)/docs/doctor.md}
[ -f "$DOCS" ] || { echo "no docs/doctor.md beside $RXN: set DOCS"; exit 2; }
newlab doctor; cd "$L"
rxn --sim --json doctor > in.json 2>in.err; echo "doctor in a checkout: rc=$?"
mkdir -p "$L/none"; (cd "$L/none" && "$RXN" --sim --json doctor > "$L/out.json" 2>"$L/out.err"); echo "doctor outside a checkout: rc=$?"
panics in.err out.err && { echo "broken: a panic"; exit 0; }
python3 - "$DOCS" in.json out.json > names.txt <<'PY'
import json, sys
rows = {l[3:].split('`')[0] for l in open(sys.argv[1]) if l.startswith('| `')}
names = []
for f in sys.argv[2:]:
    for c in json.load(open(f))['checks']:
        if c['name'] not in names: names.append(c['name'])
print('printed:', ', '.join(names))
print('without a row:', ', '.join(n for n in names if n not in rows) or 'none')
PY
cat names.txt; echo "docs: $DOCS"
grep -q '^printed: git checkout' names.txt || { echo "broken: doctor printed no checks"; exit 0; }
grep -q '^without a row: none$' names.txt || { echo "broken: docs/doctor.md has no row for check(s) doctor prints: $(sed -n 's/^without a row: //p' names.txt)"; exit 0; }
echo held; exit 1
