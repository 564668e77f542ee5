#!/bin/bash
# o307: `rxnode mark-completed M1 --status PASS` is killed (SIGKILL, power loss) at each file rename in turn (strace
# injects the kill at rename N), then `publish M1` runs at once. Killed between moving RX_RESULT.md and RX_RESULT.json
# into the outbox, it left the operator's PASS Markdown beside the approval's NOT RUN JSON: publish refused it
# ("6 problem(s) … the files disagree", exit 3) without naming the fix (mark-completed again), and listed the
# Markdown's own `json_sha256=` trailer line as a "high-entropy string (possible secret)". Killed before the moves,
# publish sent the approval's NOT RUN placeholder without a word: the PASS the operator typed was lost.
# Expected: after every kill once the result was being written, publish either sends the operator's PASS or refuses naming `mark-completed M1 --status`,
# never calls rxnode's own hash line a secret, and after that command publish sends PASS.
source "$(dirname "$0")/lib.sh"
command -v strace >/dev/null || { echo "cannot play: strace is not installed"; exit 2; }
bad=""; kills=0
for n in $(seq 1 10); do
  newlab o307; policy; rxn node set-name LAB1 >/dev/null
  { hdr M1 NO NO NO; printf '\n# manual\n\nCheck the antenna cable by hand.\n'; } | post; approve
  ( strace -f -qq -o $L/renames.txt -e trace=rename -e inject=rename:signal=SIGKILL:when=$n \
    "$RXN" --repo "$L/rx" mark-completed M1 --status PASS --note "cable checked" > $L/m1.out 2>&1; echo $? > $L/m1.rc ) 2>/dev/null
  at=$(grep -a 'rename(' $L/renames.txt | sed -n "${n}p" | grep -o '", "[^"]*"' | sed 's/.*\.local\///; s/.*\.git\///; s/"//')
  if [ "$(cat $L/m1.rc)" = 0 ]; then echo "rename $n: none (mark-completed has fewer renames), exit 0"; rm -rf "$L"; break; fi
  kills=$((kills + 1))
  echo "PUBLISH M1" | rxn publish M1 > $L/pub.out 2>&1; prc=$?
  sent=$(grep -ao 'status [A-Z ]*, as node' $L/pub.out | sed 's/status //; s/, as node//')
  echo "kill at rename $n (${at:-?}): publish exit $prc ${sent:+sent $sent }$(grep -a 'error' $L/pub.out | head -1 | cut -c1-150)"
  panics $L/*.out && bad="$bad a panic after a kill at rename $n;"
  grep -aq 'possible secret' $L/pub.out && bad="$bad killed at rename $n (${at:-?}): the refusal calls a line a possible secret ($(grep -ao 'RX_RESULT.md line [0-9]*: high-entropy[^;]*' $L/pub.out | head -1));"
  # Killed before it wrote anything of the result (the ledger checkpoint), nothing of the PASS exists: NOT RUN is true.
  if [ $prc = 0 ] && [ "$sent" != PASS ] && [[ "$at" == rx_agent_outbox/* ]]; then bad="$bad killed at rename $n (${at:-?}): publish sent ${sent:-?}, not the operator's PASS, without a word;"; fi
  if [ $prc != 0 ]; then
    grep -aq 'mark-completed M1 --status' $L/pub.out || bad="$bad killed at rename $n (${at:-?}): publish refused (exit $prc) without naming mark-completed again;"
    # The same files without the staging folder (moved away by hand): refused as files that disagree, no secret.
    S=$L/rx/.local/rx_agent_outbox/.tmp-M1.mark-completed
    if [ -d $S ]; then mv $S $L/staging; echo "no" | rxn publish M1 > $L/pub1b.out 2>&1; mv $L/staging $S
      grep -aq 'possible secret' $L/pub1b.out && bad="$bad killed at rename $n, its staging folder moved away: the refusal calls a line a possible secret ($(grep -ao 'RX_RESULT.md line [0-9]*: high-entropy[^;]*' $L/pub1b.out | head -1));"; fi
    rxn mark-completed M1 --status PASS --note "cable checked" > $L/m2.out 2>&1; mrc=$?
    echo "PUBLISH M1" | rxn publish M1 > $L/pub2.out 2>&1; p2=$?
    sent2=$(grep -ao 'status [A-Z ]*, as node' $L/pub2.out | sed 's/status //; s/, as node//')
    echo "  mark-completed again exit $mrc; publish exit $p2 ${sent2:+sent $sent2}"
    [ $p2 = 0 ] && [ "$sent2" = PASS ] || bad="$bad killed at rename $n: after mark-completed again publish exit $p2 (${sent2:-nothing sent});"
  fi
  rm -rf "$L"
done
[ $kills -ge 5 ] || bad="$bad only $kills kill(s) landed;"
[ -n "$bad" ] && { echo "broken:$bad"; exit 0; }; echo held; exit 1
