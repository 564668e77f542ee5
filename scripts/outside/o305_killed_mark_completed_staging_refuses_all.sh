#!/bin/bash
# o305: `rxnode mark-completed M1 --status PASS` is killed (SIGKILL, power loss) at each file rename in turn (strace
# injects the kill at rename N), then `status`, `mark-completed` again and `publish M1` run. A kill while the result
# was staged left the staging folder .mark-completed.tmp inside the outbox, where every entry must be a regular file:
# every later command refused the checkout ("untrusted node-local files: outbox file …/.mark-completed.tmp is not a
# regular file — fix: … restore the regular file"), so the manual task could be neither completed nor published.
# Expected: after every kill, mark-completed can be given again and publish sends the result.
source "$(dirname "$0")/lib.sh"
command -v strace >/dev/null || { echo "cannot play: strace is not installed"; exit 2; }
bad=""; kills=0
for n in $(seq 1 12); do
  newlab o305; policy; rxn node set-name LAB1 >/dev/null
  { hdr M1 NO NO NO; printf '\n# manual\n\nCheck the antenna cable by hand.\n'; } | post; approve
  ( strace -f -qq -o $L/renames.txt -e trace=rename -e inject=rename:signal=SIGKILL:when=$n \
    "$RXN" --repo "$L/rx" mark-completed M1 --status PASS --note "cable checked" > $L/m1.out 2>&1; echo $? > $L/m1.rc ) 2>/dev/null
  rc=$(cat $L/m1.rc)
  at=$(grep -a 'rename(' $L/renames.txt | sed -n "${n}p" | grep -o '", "[^"]*"' | sed 's/.*\.local\///; s/.*\.git\///; s/"//')
  if [ "$rc" = 0 ]; then echo "rename $n: none (mark-completed has fewer renames), exit 0"; rm -rf "$L"; break; fi
  kills=$((kills + 1))
  rxn status > $L/st.out 2>&1; src=$?
  rxn mark-completed M1 --status PASS --note "cable checked" > $L/m2.out 2>&1; mrc=$?
  echo "PUBLISH M1" | rxn publish M1 > $L/pub.out 2>&1; prc=$?
  echo "kill at rename $n (${at:-?}): status exit $src; mark-completed again exit $mrc; publish exit $prc $(grep -a '^published\|error' $L/pub.out | head -1 | cut -c1-170)"
  panics $L/*.out && bad="$bad a panic after a kill at rename $n;"
  if [ $src != 0 ] || [ $prc != 0 ]; then
    bad="$bad killed at rename $n (${at:-?}): status exit $src, publish exit $prc ($(grep -aho 'outbox file [^ ]* is not a regular file' $L/pub.out | head -1 | sed 's/.*\/rx_agent_outbox\///'));"
  fi
  rm -rf "$L"
done
[ $kills -ge 3 ] || bad="$bad only $kills kill(s) landed;"
[ -n "$bad" ] && { echo "broken:$bad"; exit 0; }; echo held; exit 1
