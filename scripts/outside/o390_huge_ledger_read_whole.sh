#!/bin/bash
# o390: the node's ledger .local/rx_agent_ledger.jsonl grew to 1 GiB (here one line of zeros with no line end, a
# sparse file, as a disk fault or a bad copy leaves one; a node that runs for years grows it with real lines alike),
# with one real entry after it. Every command read the whole file into memory, several times: `status` took 1.07 GB
# and 12.9 s, and under a 256 MiB address-space limit (ulimit -v) it failed: "cannot read ledger …: out of memory".
# Expected: the ledger is read line by line through a fixed buffer: status, doctor and watch --once work under the
# limit; the too-long line is skipped and named (line, bytes); the entry after it is still read (doctor: 2 good).
source "$(dirname "$0")/lib.sh"
newlab o390; policy; rxn node set-name LAB1 >/dev/null
LG=$L/rx/.local/rx_agent_ledger.jsonl
truncate -s $(( $(stat -c %s $LG) + (1 << 30) )) $LG
printf '\n{"at":"2026-12-01T00:00:00+00:00","event":"note"}\n' >> $LG
echo "ledger: $(stat -c %s $LG) bytes ($(du -k $LG | cut -f1) KiB on disk)"
bad=""
for cmd in "status" "doctor" "watch --once --interval 0.2"; do
  ( ulimit -v $((256 << 10)); /usr/bin/time -f "%M %e" -o $L/time "$RXN" --repo "$L/rx" $cmd </dev/null > $L/out 2> $L/err ); rc=$?
  read kb s < <(tail -1 $L/time 2>/dev/null)
  echo "rxnode $cmd under ulimit -v 256 MiB: exit $rc, max RSS ${kb:-?} KB, ${s:-?} s: $(grep -a 'ledger' $L/err | head -1 | cut -c1-170)"
  case "$cmd" in doctor) grep -a 'ledger ' $L/out | head -1 | cut -c1-170
    grep -aq "line(s) 2 (1073741824 bytes)" $L/out && grep -aq "(2 good)" $L/out || bad="$bad doctor did not read past the long line;";;
  *) [ $rc = 0 ] || bad="$bad rxnode $cmd exit $rc ($(tail -1 $L/err | cut -c1-120));";; esac
  panics $L/out $L/err && bad="$bad a panic in rxnode $cmd;"
done
[ -n "$bad" ] && { echo "broken:$bad"; exit 0; }; echo held; exit 1
