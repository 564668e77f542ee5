#!/bin/bash
# o309: the ledger's last line is torn (power lost in the middle of an append: 48 bytes of an entry, no line end),
# in .local/rx_agent_ledger.jsonl and in its mirror .git/rxnode/ledger.jsonl, then four commands run: status,
# mark-completed M1, status, status. Every command warned about the torn line three times per ledger ("line 9: not
# JSON … skipped"), and kept doing so after the next entry had been appended after it; its bytes were never kept
# aside, and nothing said what had happened.
# Expected: each command says it at most once per ledger; the first entry appended after it keeps the torn bytes in
# a file beside the ledger (rx_agent_ledger.torn.jsonl) and says so; the ledger keeps every byte it had and goes on
# on a new line; later commands say nothing more about it.
source "$(dirname "$0")/lib.sh"
newlab o309; policy; rxn node set-name LAB1 >/dev/null
{ hdr M1 NO NO NO; printf '\n# manual\n\nCheck the antenna cable by hand.\n'; } | post; approve
LG=$L/rx/.local/rx_agent_ledger.jsonl; MG=$L/rx/.git/rxnode/ledger.jsonl
torn='{"at":"2026-12-07T10:00:00+00:00","event":"appro'
for f in $LG $MG; do printf '%s' "$torn" >> $f; done
cp $LG $L/before.jsonl
bad=""; i=0
for cmd in "status" "mark-completed M1 --status PASS --note cable" "status" "status"; do
  i=$((i + 1)); rxn $cmd > $L/c$i.out 2> $L/c$i.err; rc=$?
  nl=$(grep -ac "$LG" $L/c$i.err); nm=$(grep -ac "$MG" $L/c$i.err)
  echo "command $i (rxnode $cmd): exit $rc; lines about the ledger: $nl, about its mirror: $nm: $(grep -a "$LG" $L/c$i.err | head -1 | sed 's/.*rx_agent_ledger.jsonl //' | cut -c1-110)"
  [ $rc = 0 ] || bad="$bad rxnode $cmd exit $rc;"
  [ $nl -le 1 ] && [ $nm -le 1 ] || bad="$bad rxnode $cmd said it $nl time(s) for the ledger, $nm for its mirror;"
  [ $i -ge 3 ] && [ $((nl + nm)) -gt 0 ] && bad="$bad command $i (rxnode $cmd), after the line was set aside, still warned;"
done
panics $L/*.out $L/*.err && bad="$bad a panic;"
aside=$L/rx/.local/rx_agent_ledger.torn.jsonl
echo "kept aside: $(cat $aside 2>/dev/null | cut -c1-200)"
grep -aqF "$(printf '%s' "$torn" | sed 's/"/\\"/g')" $aside 2>/dev/null || bad="$bad the torn bytes are in no file beside the ledger;"
cmp -s -n $(stat -c %s $L/before.jsonl) $L/before.jsonl $LG || bad="$bad the ledger's earlier bytes were rewritten;"
grep -aq "marked_completed" $LG || bad="$bad mark-completed's entry is not in the ledger;"
[ -n "$bad" ] && { echo "broken:$bad"; exit 0; }; echo held; exit 1
